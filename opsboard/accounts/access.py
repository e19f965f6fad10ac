"""What a person may do in each namespace: the one place every view, list and export asks.

A global role holds everywhere; a NamespaceGrant holds in its namespace; the higher wins.
A namespace where a person has no role is invisible to them: its CRs are a 404.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Q

from opsboard.accounts.models import NamespaceGrant
from opsboard.accounts.roles import Role, highest, user_role


@dataclass(frozen=True)
class Access:
    everywhere: Role | None = None
    grants: Mapping[str, Role] = field(default_factory=dict)

    def role_in(self, namespace: str) -> Role | None:
        return highest(self.everywhere, self.grants.get(namespace))

    def allows(self, role: Role, namespace: str) -> bool:
        have = self.role_in(namespace)
        return have is not None and have.rank >= role.rank

    def anywhere(self, role: Role) -> bool:
        """Holds `role` globally or in at least one namespace."""
        return any(r.rank >= role.rank for r in (self.everywhere, *self.grants.values()) if r)

    def namespaces(self, role: Role = Role.VIEWER) -> frozenset[str] | None:
        """The namespaces where `role` holds; None means every namespace."""
        if self.everywhere is not None and self.everywhere.rank >= role.rank:
            return None
        return frozenset(ns for ns, r in self.grants.items() if r.rank >= role.rank)

    def scope(self, role: Role = Role.VIEWER, *, field: str = "namespace") -> Q:
        """A filter keeping the rows (by their `field`) in namespaces where `role` holds."""
        allowed = self.namespaces(role)
        return Q() if allowed is None else Q(**{f"{field}__in": sorted(allowed)})

    def why_not(self, role: Role, namespace: str) -> str:
        """Why `role` does not hold in `namespace`, as a person reads it; "" if it does."""
        if self.allows(role, namespace):
            return ""
        have = self.role_in(namespace)
        return f"needs {role} in {namespace}; you are {have or 'not granted a role there'}"

    def summary(self) -> str:
        """ "operator" or "operator in team-a, viewer in team-b", for the header."""
        parts = [f"{r} in {ns}" for ns, r in sorted(self.grants.items())
                 if self.everywhere is None or r.rank > self.everywhere.rank]  # fmt: skip
        if self.everywhere is not None:
            parts.insert(0, self.everywhere.value)
        return ", ".join(parts) or "no role"

    def held(self) -> str:
        """ "you are operator in team-a", or "you hold no role anywhere"."""
        summary = self.summary()
        return "you hold no role anywhere" if summary == "no role" else f"you are {summary}"


def access_of(user: User | AnonymousUser) -> Access:
    """The person's access, read once per request (cached on the user object)."""
    if not user.is_authenticated or not user.is_active:
        return Access()
    cached = user.__dict__.get("_opsboard_access")
    if isinstance(cached, Access):
        return cached
    grants = {g.namespace: Role(g.role) for g in NamespaceGrant.objects.filter(user_id=user.pk)}
    access = Access(everywhere=user_role(user), grants=grants)
    user.__dict__["_opsboard_access"] = access
    return access


def granters(limit: int = 3) -> list[str]:
    """Who can grant a role: the global admins, by name."""
    admins = User.objects.filter(is_active=True).filter(
        Q(is_superuser=True) | Q(groups__name=Role.ADMIN)
    )
    return list(admins.order_by("username").values_list("username", flat=True).distinct()[:limit])


def refusal(access: Access, role: Role, namespace: str | None) -> str:
    """The whole refusal: what was refused, why, and who can grant it."""
    reason = (
        access.why_not(role, namespace)
        if namespace is not None
        else f"needs {role} in some namespace; {access.held()}"
    )
    names = granters()
    who = f"an admin ({', '.join(names)})" if names else "an opsboard admin"
    return f"Not allowed: this {reason}. Ask {who} to grant it."
