"""The audit follows the engine through its signals (the engine never imports the audit)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from opsboard.audit.services import audit_link_run
from opsboard.engine.models import ReconcileRun
from opsboard.engine.signals import reconcile_run_recorded


def _run_recorded(*, run: ReconcileRun, started_at: datetime, **_: Any) -> None:
    audit_link_run(run=run, started_at=started_at)


def connect() -> None:
    reconcile_run_recorded.connect(
        _run_recorded, sender=ReconcileRun, dispatch_uid="opsboard-audit-link-run"
    )
