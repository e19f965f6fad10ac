"""Writing audit entries, and linking each one to the reconcile run that first saw it."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from axes.helpers import get_cool_off
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone
from django.utils.text import Truncator

from opsboard.accounts.roles import Role
from opsboard.accounts.throttle import lockout_of, lockout_subject
from opsboard.audit.models import AuditEntry
from opsboard.engine.models import ReconcileRun

if TYPE_CHECKING:
    from opsboard.accounts.kube_identity import KubeIdentity
    from opsboard.dashboard.kinds import KindInfo


def audit_record(
    *,
    user: User,
    action: str,
    info: KindInfo,
    namespace: str,
    name: str,
    result: str,
    asked_at: datetime | None = None,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    message: str = "",
    uid: str = "",
    generation: int | None = None,
    reverts: AuditEntry | None = None,
    reverts_generation: int | None = None,
    as_user: KubeIdentity | None = None,
) -> AuditEntry:
    """Stores an entry. `asked_at` is when the change was sent (default: now); a run that
    started since then and observed `generation` (a fast reconcile) is linked at once.
    `as_user`: whom the change was sent to the cluster as (impersonation), if anyone."""
    entry = AuditEntry.objects.create(
        at=asked_at or timezone.now(),
        user=user,
        username=user.get_username(),
        kube_user=as_user.user if as_user else "",
        kube_groups=list(as_user.groups) if as_user else [],
        action=action,
        controller=info.name,
        kind=info.kind.kind,
        namespace=namespace,
        name=name,
        uid=uid,
        before=before or {},
        after=after or {},
        result=result,
        message=message,
        generation=generation,
        reverts=reverts,
        reverts_generation=reverts_generation,
    )
    if result == AuditEntry.Result.APPLIED and uid and generation is not None:
        first = (
            ReconcileRun.objects.filter(
                uid=uid, generation__gte=generation, started_at__gte=entry.at
            )
            .order_by("started_at")
            .first()
        )
        if first is not None:
            AuditEntry.objects.filter(pk=entry.pk).update(observed_by=first)
            entry.observed_by = first
    return entry


def audit_link_run(*, run: ReconcileRun, started_at: datetime) -> int:
    """Links the applied entries that `run` (which started at `started_at`) is the first to
    observe: same object, generation at or below the run's, asked for before it started.
    Called as each run is recorded; returns the entries linked."""
    if not run.uid or run.generation is None:
        return 0
    # Almost every run links nothing, so first a plain read on the partial index of unlinked
    # entries: an UPDATE, even of no row, would take SQLite's one write lock from the
    # watcher and the other workers, and the ORM's query building cost more than the query.
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT 1 FROM {AuditEntry._meta.db_table} WHERE uid = %s"
            " AND observed_by_id IS NULL AND generation <= %s LIMIT 1",
            [run.uid, run.generation],
        )
        if cursor.fetchone() is None:
            return 0
    return AuditEntry.objects.filter(
        uid=run.uid,
        generation__lte=run.generation,
        at__lte=started_at,
        observed_by__isnull=True,
        result=AuditEntry.Result.APPLIED,
    ).update(observed_by=run)


def audit_lockout(*, username: str, address: str) -> AuditEntry | None:
    """Records a login lockout once per lockout: attempts refused while it lasts (each of
    which axes signals again) add nothing, so a flood of guesses cannot flood the audit.
    It says what is locked, and the name tried; a name a stranger posted is not an account,
    so it is not the entry's username, and it is quoted, cut short and marked as such."""
    lockout = lockout_of(username=username, address=address)
    name = username
    if not User.objects.filter(username=username).exists():
        username = ""
        name = f'"{Truncator(name).chars(40)}" (not an account)' if name else ""
    locked = [
        f"user {name}" if lockout.username_until else "",
        f"address {address}" if lockout.address_until else "",
    ]
    what = " and ".join(filter(None, locked)) or "nothing now"
    if name and not lockout.username_until:
        what += f"; the last name tried: {name}"
    cool_off = get_cool_off()
    recent = AuditEntry.objects.filter(
        action=AuditEntry.Action.LOCKOUT, username=username, message__contains=f"from {address} "
    )
    if cool_off is not None and recent.filter(at__gte=timezone.now() - cool_off).exists():
        return None
    lasts = f"for {int(cool_off.total_seconds())} s" if cool_off else "until an admin resets it"
    return AuditEntry.objects.create(
        username=username,
        action=AuditEntry.Action.LOCKOUT,
        controller="", kind="", namespace="", name="",
        result=AuditEntry.Result.REJECTED,
        message=f"Logins locked out after {settings.AXES_FAILURE_LIMIT} failures "
        f"from {address} {lasts}: locked {what}",
    )  # fmt: skip


def audit_lockout_lifted(*, username: str, address: str, cleared: int, by: str) -> AuditEntry:
    """Records that someone lifted the lockout of `username` and/or `address`, through `by`."""
    whose = lockout_subject(username, address)
    return AuditEntry.objects.create(
        username=by, action=AuditEntry.Action.UNLOCK, controller="", kind="", namespace="",
        name=username, result=AuditEntry.Result.APPLIED,
        message=f"Lifted the lockout of {whose}: cleared {cleared} failure record(s) "
        f"(through {by})",
    )  # fmt: skip


def audit_sessions_revoked(*, target: User, by: str, ended: int) -> AuditEntry:
    """Records that someone ended every session `target` held, through `by`."""
    who = target.get_username()
    return AuditEntry.objects.create(
        username=by, action=AuditEntry.Action.REVOKE, controller="", kind="User",
        namespace="", name=who, result=AuditEntry.Result.APPLIED,
        message=f"Ended {ended} session(s) of {who} (through {by})",
    )  # fmt: skip


def audit_role_change(
    *, actor: User | None, by: str, target: User, namespace: str, before: Role | None,
    after: Role | None,
) -> AuditEntry:  # fmt: skip
    """Records a change to `target`'s role everywhere (namespace "") or in one namespace,
    made by `actor` (None: from the command line) through `by` ("Django admin", "manage.py
    opsboard_user", "single sign-on")."""
    where = f"in {namespace}" if namespace else "everywhere"
    who = target.get_username()
    if after is None:
        what = f"Took {before} {where} from {who}"
    elif before is None:
        what = f"Granted {after} {where} to {who}"
    else:
        what = f"Changed {who}'s role {where} from {before} to {after}"
    return AuditEntry.objects.create(
        user=actor, username=actor.get_username() if actor else by,
        action=AuditEntry.Action.ROLE, controller="", kind="User", namespace=namespace,
        name=who, before={"role": before.value if before else None},
        after={"role": after.value if after else None},
        result=AuditEntry.Result.APPLIED, message=f"{what} (through {by})",
    )  # fmt: skip
