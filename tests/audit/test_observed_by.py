"""An audit entry is linked to the reconcile run that first observed it when that run is
recorded (the engine's signal), or at once when the run was recorded first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User

from controllers.base import Key
from opsboard.audit.models import AuditEntry
from opsboard.audit.services import audit_record
from opsboard.dashboard.kinds import kind_get
from opsboard.engine.models import ReconcileRun
from opsboard.engine.runlog import RunRecord, reconcile_run_record

pytestmark = pytest.mark.django_db
KEY = Key("memcached", "default", "cache-a")


def _record(
    *, generation: int, started: datetime, actions: tuple[str, ...] = ("x",)
) -> ReconcileRun:
    return reconcile_run_record(
        run=RunRecord(
            key=KEY, uid="uid-1", generation=generation, trigger="event", trigger_detail="",
            worker="w", started_at=started, finished_at=started + timedelta(milliseconds=5),
            outcome="success", requeue_after=None, error="", actions=list(actions),
        )
    )  # fmt: skip


def _patch(*, generation: int, asked_at: datetime) -> AuditEntry:
    return audit_record(
        user=User.objects.create(username=f"otto{generation}"), action=AuditEntry.Action.PATCH,
        info=kind_get("memcached"), namespace="default", name="cache-a", uid="uid-1",
        result=AuditEntry.Result.APPLIED, generation=generation, asked_at=asked_at,
    )  # fmt: skip


def test_the_first_run_recorded_at_or_past_the_generation_is_linked() -> None:
    now = datetime.now(UTC)
    entry = _patch(generation=2, asked_at=now)
    _record(generation=1, started=now + timedelta(seconds=1))  # the old generation still
    entry.refresh_from_db()
    assert entry.observed_by is None
    first = _record(generation=2, started=now + timedelta(seconds=2))
    _record(generation=2, started=now + timedelta(seconds=3), actions=("y",))
    entry.refresh_from_db()
    assert entry.observed_by == first


def test_a_run_recorded_before_the_entry_is_linked_at_once() -> None:
    asked = datetime.now(UTC)
    _record(generation=2, started=asked - timedelta(minutes=5))  # before the request: not it
    fast = _record(generation=3, started=asked + timedelta(milliseconds=1), actions=("y",))
    entry = _patch(generation=3, asked_at=asked)
    assert entry.observed_by == fast
    assert AuditEntry.objects.get(pk=entry.pk).observed_by == fast


def test_a_run_that_started_before_the_request_does_not_observe_it() -> None:
    asked = datetime.now(UTC)
    entry = _patch(generation=2, asked_at=asked)
    _record(generation=2, started=asked - timedelta(seconds=1))  # in flight when asked
    entry.refresh_from_db()
    assert entry.observed_by is None
