"""Three roles, kept as Django groups: viewer < operator < admin.

A user's global role is the highest role group they belong to; superusers are admins.
Roles in one namespace only are NamespaceGrants (opsboard.accounts.access reads both).
"""

from __future__ import annotations

from enum import StrEnum

from django.contrib.auth.models import AnonymousUser, Group, User
from django.db import transaction

from opsboard.accounts.models import NamespaceGrant


class Role(StrEnum):
    VIEWER = "viewer"  # reads everything
    OPERATOR = "operator"  # also patches size/image and triggers reconciles
    ADMIN = "admin"  # also the audit pages and Django admin

    @property
    def rank(self) -> int:
        return list(Role).index(self)


def highest(*roles: Role | None) -> Role | None:
    return max((r for r in roles if r is not None), key=lambda r: r.rank, default=None)


def user_role(user: User | AnonymousUser) -> Role | None:
    """The global role: the one that holds in every namespace."""
    if not user.is_authenticated or not user.is_active:
        return None
    if user.is_superuser:
        return Role.ADMIN
    # Cached on the user object: templates and views ask several times per request.
    cached: Role | bool | None = getattr(user, "_opsboard_role", False)
    if cached is not False:
        return cached if isinstance(cached, Role) else None
    names = set(user.groups.filter(name__in=list(Role)).values_list("name", flat=True))
    role = highest(*(Role(name) for name in names))
    setattr(user, "_opsboard_role", role)  # noqa: B010 (not a field: a per-request cache)
    return role


def has_role(user: User | AnonymousUser, role: Role) -> bool:
    current = user_role(user)
    return current is not None and current.rank >= role.rank


def _forget(user: User) -> None:
    user.__dict__.pop("_opsboard_role", None)
    user.__dict__.pop("_opsboard_access", None)


@transaction.atomic
def role_assign(*, user: User, role: Role | None) -> None:
    """Make `role` the user's only global role (None: no global role); admins also get
    Django admin access. Writes only what changes, so an unchanged role ends no session."""
    groups = {r: Group.objects.get_or_create(name=r.value)[0] for r in Role}
    have = set(user.groups.filter(name__in=list(Role)).values_list("name", flat=True))
    want = {role.value} if role else set()
    if stale := [groups[Role(name)] for name in have - want]:
        user.groups.remove(*stale)
    if role is not None and role.value not in have:
        user.groups.add(groups[role])
    admin = role == Role.ADMIN
    if (user.is_staff, user.is_superuser) != (admin, admin):
        user.is_staff = user.is_superuser = admin
        user.save(update_fields=["is_staff", "is_superuser"])
    _forget(user)


@transaction.atomic
def grant_assign(*, user: User, namespace: str, role: Role | None, source: str = "manual") -> None:
    """Give `user` `role` in `namespace` only (None: take the grant away)."""
    current = NamespaceGrant.objects.filter(user=user, namespace=namespace).first()
    if role is None:
        if current is not None:
            current.delete()
    elif current is None:
        NamespaceGrant.objects.create(user=user, namespace=namespace, role=role, source=source)
    elif (current.role, current.source) != (role.value, source):
        current.role, current.source = role.value, source
        current.save(update_fields=["role", "source"])
    _forget(user)
