"""Sessions that end: a change to a person's role, scope or active flag ends every session
they hold at once (the next request finds no session and goes to the login page)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group, User
from django.dispatch import Signal
from django.http import HttpRequest

from opsboard.accounts.models import LoginSession, NamespaceGrant

# The fields whose change alters what a person may do.
ACCESS_FIELDS = ("is_active", "is_superuser", "is_staff")
# Sent with target (User), by (how: "manage.py opsboard_user") and ended (how many) when
# someone ends a person's sessions on purpose, for the audit; the ends that follow a role
# change are audited as that change.
sessions_revoked = Signal()


def sessions_end(*, user_id: int) -> int:
    """Deletes every session of the user from the session store; returns how many."""
    store = import_module(settings.SESSION_ENGINE).SessionStore
    keys = list(LoginSession.objects.filter(user_id=user_id).values_list("session_key", flat=True))
    for key in keys:
        store(session_key=key).delete(key)
    LoginSession.objects.filter(user_id=user_id).delete()
    return len(keys)


def session_started(
    *, request: HttpRequest, user: AbstractBaseUser | AnonymousUser, **_: Any
) -> None:
    key = request.session.session_key if hasattr(request, "session") else None
    if key and user.pk is not None:
        LoginSession.objects.update_or_create(session_key=key, defaults={"user_id": user.pk})
        # Sessions that expired without a logout leave rows behind: drop them as we go.
        store = import_module(settings.SESSION_ENGINE).SessionStore()
        rows = LoginSession.objects.filter(user_id=user.pk).exclude(session_key=key)
        gone = [k for k in rows.values_list("session_key", flat=True) if not store.exists(k)]
        LoginSession.objects.filter(session_key__in=gone).delete()


def session_ended(*, request: HttpRequest, **_: Any) -> None:
    key = request.session.session_key if hasattr(request, "session") else None
    if key:
        LoginSession.objects.filter(session_key=key).delete()


def user_saving(*, instance: User, update_fields: Any = None, **_: Any) -> None:
    """Remembers whether this save changes what the person may do (acted on once saved)."""
    if instance.pk is None or (update_fields and not set(update_fields) & set(ACCESS_FIELDS)):
        return
    before = User.objects.filter(pk=instance.pk).values(*ACCESS_FIELDS).first()
    after = {f: getattr(instance, f) for f in ACCESS_FIELDS}
    instance.__dict__["_opsboard_access_changed"] = before is not None and before != after


def user_saved(*, instance: User, **_: Any) -> None:
    if instance.__dict__.pop("_opsboard_access_changed", False):
        sessions_end(user_id=instance.pk)


def groups_changed(
    *, instance: User | Group, action: str, pk_set: set[int] | None, reverse: bool, **_: Any
) -> None:
    if action not in {"post_add", "post_remove", "pre_clear"}:
        return
    if action != "pre_clear" and not pk_set:  # Django signals an add of groups already held
        return
    if isinstance(instance, User):
        sessions_end(user_id=instance.pk)
    elif action != "pre_clear":  # a group's members changed: each of them
        for pk in pk_set or ():
            sessions_end(user_id=pk)
    else:
        for pk in instance.user_set.values_list("pk", flat=True):
            sessions_end(user_id=pk)


def grant_changed(*, instance: NamespaceGrant, **_: Any) -> None:
    sessions_end(user_id=instance.user_id)
