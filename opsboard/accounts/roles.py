"""Three roles, kept as Django groups: viewer < operator < admin.

A user's role is the highest role group they belong to; superusers are admins.
"""

from __future__ import annotations

from enum import StrEnum

from django.contrib.auth.models import AnonymousUser, Group, User
from django.db import transaction


class Role(StrEnum):
    VIEWER = "viewer"  # reads everything
    OPERATOR = "operator"  # also patches size/image and triggers reconciles
    ADMIN = "admin"  # also the audit pages and Django admin

    @property
    def rank(self) -> int:
        return list(Role).index(self)


def user_role(user: User | AnonymousUser) -> Role | None:
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return Role.ADMIN
    # Cached on the user object: templates and views ask several times per request.
    cached: Role | bool | None = getattr(user, "_opsboard_role", False)
    if cached is not False:
        return cached if isinstance(cached, Role) else None
    names = set(user.groups.filter(name__in=list(Role)).values_list("name", flat=True))
    role = max((Role(name) for name in names), key=lambda r: r.rank, default=None)
    setattr(user, "_opsboard_role", role)  # noqa: B010 (not a field: a per-request cache)
    return role


def has_role(user: User | AnonymousUser, role: Role) -> bool:
    current = user_role(user)
    return current is not None and current.rank >= role.rank


@transaction.atomic
def role_assign(*, user: User, role: Role) -> None:
    """Make `role` the user's only role; admins also get Django admin access."""
    groups = {r: Group.objects.get_or_create(name=r.value)[0] for r in Role}
    user.groups.remove(*(g for r, g in groups.items() if r != role))
    user.groups.add(groups[role])
    user.is_staff = user.is_superuser = role == Role.ADMIN
    user.save(update_fields=["is_staff", "is_superuser"])
    user.__dict__.pop("_opsboard_role", None)
