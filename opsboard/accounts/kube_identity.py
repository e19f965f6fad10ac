"""Who the web app says a person is when it calls the API server on their behalf.

With OPSBOARD_KUBE_IMPERSONATE=true, the dashboard's calls to the cluster (read the CR, the
dry run, the patch, the access review) carry Impersonate-User and Impersonate-Group, so the
cluster's own RBAC decides. The user is the opsboard name; the groups are the person's SSO
groups and the groups OPSBOARD_KUBE_ROLE_GROUPS gives their global role; both with
OPSBOARD_KUBE_IMPERSONATE_PREFIX in front (as the API server's OIDC authenticator would).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User

from opsboard.accounts.models import SsoIdentity
from opsboard.accounts.roles import user_role


@dataclass(frozen=True)
class KubeIdentity:
    user: str
    groups: tuple[str, ...] = ()

    def headers(self) -> list[tuple[str, str]]:
        return [("Impersonate-User", self.user)] + [("Impersonate-Group", g) for g in self.groups]

    def describe(self) -> str:
        groups = f" (groups {', '.join(self.groups)})" if self.groups else ""
        return f'"{self.user}"{groups}'


def kube_identity(user: User | AnonymousUser) -> KubeIdentity | None:
    """The identity to impersonate for this person; None when impersonation is off."""
    if not settings.OPSBOARD_KUBE_IMPERSONATE or not user.is_authenticated:
        return None
    prefix: str = settings.OPSBOARD_KUBE_IMPERSONATE_PREFIX
    sso = SsoIdentity.objects.filter(user_id=user.pk).values_list("groups", flat=True).first()
    groups = list(sso or [])
    role = user_role(user)
    if role is not None:
        groups += settings.OPSBOARD_KUBE_ROLE_GROUPS.get(role.value, [])
    unique = tuple(dict.fromkeys(f"{prefix}{g}" for g in groups))
    return KubeIdentity(user=f"{prefix}{user.get_username()}", groups=unique)
