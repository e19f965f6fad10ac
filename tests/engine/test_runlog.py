"""The reconcile log: every run recorded, no-op runs folded, retention bounded."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from django.forms.models import model_to_dict
from django.test import override_settings

from controllers.base import Key
from opsboard.engine.models import ReconcileRun
from opsboard.engine.runlog import RunRecord, reconcile_run_record, reconcile_runs_prune

pytestmark = pytest.mark.django_db
KEY = Key("toy", "ns", "a")
T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def run(
    at: int,
    *,
    actions: list[str] | None = None,
    outcome: str = "success",
    error: str = "",
    generation: int = 1,
    trigger: str = "event",
) -> RunRecord:
    start = T0 + timedelta(seconds=at)
    return RunRecord(
        key=KEY,
        uid="u1",
        generation=generation,
        trigger=trigger,
        trigger_detail="MODIFIED Toy ns/a",
        worker="w:1",
        started_at=start,
        finished_at=start + timedelta(milliseconds=3),
        outcome=outcome,
        requeue_after=None,
        error=error,
        actions=actions or [],
    )


def test_a_run_is_recorded_with_its_actions_in_order() -> None:
    row = reconcile_run_record(run=run(0, actions=["Created ConfigMap a", "Updated status"]))
    row.refresh_from_db()
    assert row.actions == ["Created ConfigMap a", "Updated status"]
    assert row.duration_ms == pytest.approx(3.0)
    assert (row.controller, row.namespace, row.name, row.outcome) == ("toy", "ns", "a", "success")


def test_the_row_returned_is_the_row_stored_field_for_field() -> None:
    recorded = replace(
        run(0, actions=["Scaled Deployment a replicas 1→2"]),
        requeue_after=1.5,
        triggers=[{"trigger": "event", "detail": "ADDED Pod ns/a-x", "at": 1.25}],
        triggers_dropped=2,
        queue_wait_ms=0.75,
        backoff_step=1,
    )
    row = reconcile_run_record(run=recorded)
    stored = ReconcileRun.objects.get(id=row.id)
    assert model_to_dict(row) == model_to_dict(stored)
    assert stored.next_due_at == T0 + timedelta(seconds=1.5, milliseconds=3)
    assert stored.triggers == recorded.triggers and stored.actions == recorded.actions


def test_runs_that_change_nothing_fold_into_the_last_such_run() -> None:
    reconcile_run_record(run=run(0, actions=["Created ConfigMap a"]))
    first_noop = reconcile_run_record(run=run(1))
    reconcile_run_record(run=run(2))
    reconcile_run_record(run=run(3))
    assert ReconcileRun.objects.count() == 2
    first_noop.refresh_from_db()
    assert first_noop.folded_count == 2
    assert first_noop.last_folded_at == T0 + timedelta(seconds=3)


def test_a_noop_after_a_new_generation_is_not_folded() -> None:
    reconcile_run_record(run=run(0))
    reconcile_run_record(run=run(1, generation=2))
    assert ReconcileRun.objects.count() == 2


def test_a_manual_run_neither_folds_nor_is_folded_into() -> None:
    reconcile_run_record(run=run(0))
    manual = reconcile_run_record(run=run(1, trigger="manual"))
    reconcile_run_record(run=run(2))
    assert ReconcileRun.objects.count() == 3
    manual.refresh_from_db()
    assert (manual.trigger, manual.folded_count) == ("manual", 0)


def test_errors_are_never_folded() -> None:
    reconcile_run_record(run=run(0, outcome="error", error="boom"))
    reconcile_run_record(run=run(1, outcome="error", error="boom"))
    assert ReconcileRun.objects.count() == 2


@pytest.mark.parametrize("keep", [1, 3])
def test_only_the_last_runs_of_a_key_are_kept(keep: int) -> None:
    with override_settings(OPSBOARD_RUNLOG_KEEP_PER_KEY=keep):
        for at in range(6):
            reconcile_run_record(run=run(at, actions=[f"Did {at}"]))
    kept = ReconcileRun.objects.order_by("started_at").values_list("actions", flat=True)
    assert list(kept) == [[f"Did {at}"] for at in range(6 - keep, 6)]


@override_settings(OPSBOARD_RUNLOG_KEEP_DAYS=7)
def test_runs_older_than_the_retention_are_pruned() -> None:
    reconcile_run_record(run=run(0, actions=["old"]))
    reconcile_run_record(run=run(9 * 86400, actions=["new"]))
    assert reconcile_runs_prune(now=T0 + timedelta(days=9)) == 1
    assert list(ReconcileRun.objects.values_list("actions", flat=True)) == [["new"]]
