"""Changes to what a person may do, announced for the audit: `role_changed` is sent once per
role that changed (everywhere, or in one namespace), with who changed it. The audit listens
(this app is below it and never imports it).

    with role_changes_announced(target=user, actor=None, by="manage.py opsboard_user"):
        grant_assign(user=user, namespace="team-a", role=Role.OPERATOR)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib.auth.models import User
from django.dispatch import Signal

from opsboard.accounts.access import Access, access_of
from opsboard.accounts.roles import Role

# Sent with actor (User | None), by (how: "Django admin"), target (User), namespace ("" for
# everywhere), before and after (Role | None).
role_changed = Signal()


def access_read(user: User) -> Access:
    """The person's access as stored now (not the per-request cache)."""
    stored = User.objects.filter(pk=user.pk).first() if user.pk else None
    return access_of(stored) if stored is not None else Access()


def access_diff(before: Access, after: Access) -> list[tuple[str, Role | None, Role | None]]:
    """(namespace, or "" for everywhere; role before; role after) of each role that changed."""
    changed = [("", before.everywhere, after.everywhere)]
    for namespace in sorted({*before.grants, *after.grants}):
        changed.append((namespace, before.grants.get(namespace), after.grants.get(namespace)))
    return [(ns, old, new) for ns, old, new in changed if old != new]


def role_changes_announce(*, target: User, actor: User | None, by: str, before: Access) -> None:
    for namespace, old, new in access_diff(before, access_read(target)):
        role_changed.send(
            sender=User, actor=actor, by=by, target=target, namespace=namespace,
            before=old, after=new,
        )  # fmt: skip


@contextmanager
def role_changes_announced(*, target: User, actor: User | None, by: str) -> Iterator[None]:
    """Announces what the block changed in the target's roles, once it is done."""
    before = access_read(target)
    yield
    role_changes_announce(target=target, actor=actor, by=by, before=before)
