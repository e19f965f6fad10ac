"""The audit follows the engine and the login throttle through their signals (neither
imports the audit)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from axes.signals import user_locked_out
from django.http import HttpRequest

from opsboard.audit.services import audit_link_run, audit_lockout
from opsboard.engine.models import ReconcileRun
from opsboard.engine.signals import reconcile_run_recorded


def _run_recorded(*, run: ReconcileRun, started_at: datetime, **_: Any) -> None:
    audit_link_run(run=run, started_at=started_at)


def _locked_out(
    *, request: HttpRequest | None, username: str | None, ip_address: str | None, **_: Any
) -> None:
    audit_lockout(username=username or "", address=ip_address or "")


def connect() -> None:
    reconcile_run_recorded.connect(
        _run_recorded, sender=ReconcileRun, dispatch_uid="opsboard-audit-link-run"
    )
    user_locked_out.connect(_locked_out, dispatch_uid="opsboard-audit-lockout")
