"""Roles from the identity provider's groups, applied at each SSO login."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import User
from django.db import transaction

from opsboard.accounts.group_roles import GroupRole
from opsboard.accounts.models import NamespaceGrant
from opsboard.accounts.role_changes import role_changes_announced
from opsboard.accounts.roles import Role, grant_assign, highest, role_assign


def roles_from_groups(
    groups: Iterable[str], rules: Iterable[GroupRole]
) -> tuple[Role | None, dict[str, Role]]:
    """(the global role, the role per namespace) that `groups` give: the highest of each."""
    have = set(groups)
    everywhere: Role | None = None
    where: dict[str, Role] = {}
    for rule in rules:
        if rule.group not in have:
            continue
        if rule.namespace is None:
            everywhere = highest(everywhere, Role(rule.role))
        else:
            where[rule.namespace] = highest(where.get(rule.namespace), Role(rule.role)) or Role(
                rule.role
            )
    return everywhere, where


@transaction.atomic
def sso_roles_apply(*, user: User, groups: Iterable[str], rules: Iterable[GroupRole]) -> None:
    """The global role and the SSO grants become what the groups say; grants made by hand
    (Django admin, opsboard_user) stay. Only what changes is written, so an unchanged login
    ends none of the person's other sessions."""
    everywhere, where = roles_from_groups(groups, rules)
    with role_changes_announced(target=user, actor=user, by="single sign-on"):
        role_assign(user=user, role=everywhere)
        manual = set(
            NamespaceGrant.objects.filter(user=user, source="manual").values_list(
                "namespace", flat=True
            )
        )
        for namespace, role in where.items():
            if namespace not in manual:
                grant_assign(user=user, namespace=namespace, role=role, source="oidc")
        for gone in NamespaceGrant.objects.filter(user=user, source="oidc").exclude(
            namespace__in=list(where)
        ):
            gone.delete()
