"""OPSBOARD_OIDC_GROUP_ROLES: which identity-provider group gives which role, and where;
OPSBOARD_KUBE_ROLE_GROUPS: which Kubernetes groups a role is impersonated with.

    platform-admins=admin,team-a-ops=operator:team-a,team-a-ops=viewer:team-b

Pure parsing (settings read it at start-up): a bad item stops start-up naming it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured

ROLES = ("viewer", "operator", "admin")
_NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


@dataclass(frozen=True)
class GroupRole:
    group: str
    role: str  # one of ROLES
    namespace: str | None  # None: everywhere


def parse_group_roles(raw: str, *, name: str = "OPSBOARD_OIDC_GROUP_ROLES") -> list[GroupRole]:
    rules = []
    for item in (part.strip() for part in raw.split(",")):
        if not item:
            continue
        group, sep, target = (p.strip() for p in item.rpartition("="))
        role, _, namespace = (p.strip() for p in target.partition(":"))
        if not sep or not group or role not in ROLES:
            raise ImproperlyConfigured(
                f"{name}: {item!r} is not GROUP=ROLE or GROUP=ROLE:NAMESPACE "
                f"(ROLE one of {', '.join(ROLES)})"
            )
        if namespace and not _NAMESPACE.fullmatch(namespace):
            raise ImproperlyConfigured(f"{name}: {namespace!r} in {item!r} is not a namespace")
        rules.append(GroupRole(group, role, namespace or None))
    return rules


def parse_role_groups(raw: str, *, name: str = "OPSBOARD_KUBE_ROLE_GROUPS") -> dict[str, list[str]]:
    """`operator=team-operators,viewer=team-viewers`: the Kubernetes groups a person with
    that global role is impersonated with."""
    mapping: dict[str, list[str]] = {}
    for item in (part.strip() for part in raw.split(",")):
        if not item:
            continue
        role, sep, group = (p.strip() for p in item.partition("="))
        if not sep or role not in ROLES or not group:
            raise ImproperlyConfigured(
                f"{name}: {item!r} is not ROLE=GROUP (ROLE one of {', '.join(ROLES)})"
            )
        mapping.setdefault(role, []).append(group)
    return mapping
