"""Three roles, kept as Django groups: viewer < operator < admin.

A user's role is the highest role group they belong to; superusers are admins.
"""

from __future__ import annotations

from enum import StrEnum

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group
from django.db import transaction


class Role(StrEnum):
    VIEWER = "viewer"  # reads everything
    OPERATOR = "operator"  # also patches size/image and triggers reconciles
    ADMIN = "admin"  # also the audit pages and Django admin

    @property
    def rank(self) -> int:
        return list(Role).index(self)


def user_role(user: AbstractBaseUser | AnonymousUser) -> Role | None:
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return Role.ADMIN
    # Cached on the user object: templates and views ask several times per request.
    cached = getattr(user, "_opsboard_role", False)
    if cached is not False:
        return cached
    names = set(user.groups.filter(name__in=list(Role)).values_list("name", flat=True))
    role = max((Role(name) for name in names), key=lambda r: r.rank, default=None)
    user._opsboard_role = role  # type: ignore[union-attr]
    return role


def has_role(user: AbstractBaseUser | AnonymousUser, role: Role) -> bool:
    current = user_role(user)
    return current is not None and current.rank >= role.rank


@transaction.atomic
def role_assign(*, user: AbstractBaseUser, role: Role) -> None:
    """Make `role` the user's only role; admins also get Django admin access."""
    groups = {r: Group.objects.get_or_create(name=r.value)[0] for r in Role}
    user.groups.remove(*(g for r, g in groups.items() if r != role))  # type: ignore[attr-defined]
    user.groups.add(groups[role])  # type: ignore[attr-defined]
    user.is_staff = user.is_superuser = role == Role.ADMIN  # type: ignore[attr-defined]
    user.save(update_fields=["is_staff", "is_superuser"])
    user.__dict__.pop("_opsboard_role", None)
