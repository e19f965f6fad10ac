"""The audit follows the engine, the login throttle (its lockouts, and those lifted by hand),
role changes and sessions ended by hand through their signals (none of them imports the
audit)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from axes.signals import user_locked_out
from django.http import HttpRequest

from opsboard.accounts.role_changes import role_changed
from opsboard.accounts.sessions import sessions_revoked
from opsboard.accounts.throttle import lockout_lifted
from opsboard.audit.services import (
    audit_link_run,
    audit_lockout,
    audit_lockout_lifted,
    audit_role_change,
    audit_sessions_revoked,
)
from opsboard.engine.models import ReconcileRun
from opsboard.engine.signals import reconcile_run_recorded


def _run_recorded(*, run: ReconcileRun, started_at: datetime, **_: Any) -> None:
    audit_link_run(run=run, started_at=started_at)


def _locked_out(
    *, request: HttpRequest | None, username: str | None, ip_address: str | None, **_: Any
) -> None:
    audit_lockout(username=username or "", address=ip_address or "")


def _role_changed(**kwargs: Any) -> None:
    kwargs.pop("signal", None)
    kwargs.pop("sender", None)
    audit_role_change(**kwargs)


def _sessions_revoked(*, target: Any, by: str, ended: int, **_: Any) -> None:
    audit_sessions_revoked(target=target, by=by, ended=ended)


def _lockout_lifted(*, username: str, address: str, cleared: int, by: str, **_: Any) -> None:
    audit_lockout_lifted(username=username, address=address, cleared=cleared, by=by)


def connect() -> None:
    reconcile_run_recorded.connect(
        _run_recorded, sender=ReconcileRun, dispatch_uid="opsboard-audit-link-run"
    )
    user_locked_out.connect(_locked_out, dispatch_uid="opsboard-audit-lockout")
    role_changed.connect(_role_changed, dispatch_uid="opsboard-audit-role-change")
    lockout_lifted.connect(_lockout_lifted, dispatch_uid="opsboard-audit-lockout-lifted")
    sessions_revoked.connect(_sessions_revoked, dispatch_uid="opsboard-audit-sessions-revoked")
