"""The reconcile timeline: each run records the triggers merged into it while it waited,
its wait in the queue, its backoff step, its worker and when the key runs again."""

from __future__ import annotations

import pytest

from controllers.base import Key
from controllers.kube import ApiKube
from opsboard.engine.backlog import queue_backlog
from opsboard.engine.enqueue import reconcile_enqueue, reconcile_enqueue_many
from opsboard.engine.models import ReconcileRun
from tests.engine.toy import TOY, toy
from tests.fixtures.celery import EngineProcesses
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_events_deduplicated_into_one_run_are_all_recorded_in_it(
    engine: EngineProcesses, toy_crd: None, namespace: str
) -> None:
    engine.controllers = "tests.engine.toy"
    key = Key("toy", namespace, "merged")
    # No worker yet: three events queue the key, and the queue keeps it once.
    sent = reconcile_enqueue_many([
        (key, "event", f"MODIFIED Pod {namespace}/merged-1"),
        (key, "event", f"MODIFIED Deployment {namespace}/merged"),
    ])  # fmt: skip
    assert sent == 1
    assert reconcile_enqueue(key=key, trigger="event", detail="MODIFIED Toy x") is False
    backlog = queue_backlog("toy")
    assert backlog.depth == 1 and backlog.oldest_key == str(key)
    assert backlog.oldest_age is not None and backlog.oldest_age >= 0

    engine.start_worker()
    run = wait_for(
        lambda: ReconcileRun.objects.filter(namespace=namespace, name="merged").first(),
        what="the run",
    )
    assert [t["detail"] for t in run.triggers] == [
        f"MODIFIED Pod {namespace}/merged-1",
        f"MODIFIED Deployment {namespace}/merged",
        "MODIFIED Toy x",
    ]
    assert run.queue_wait_ms is not None and run.queue_wait_ms > 0
    assert run.worker and run.backoff_step == 0 and run.next_due_at is None
    assert all(t["before_ms"] >= 0 for t in run.merged)
    assert queue_backlog("toy").depth == 0


def test_a_failing_key_records_its_backoff_step_and_next_run(
    engine: EngineProcesses, toy_crd: None, api: ApiKube, namespace: str
) -> None:
    engine.controllers = "tests.engine.toy"
    engine.extra_env.update(OPSBOARD_BACKOFF_BASE="0.2", OPSBOARD_BACKOFF_MAX="5")
    engine.start_worker()
    engine.start_watcher()
    api.create(TOY, toy("flaky", namespace, fail="temporary", touch=True))
    failing = wait_for(
        lambda: (
            list(
                ReconcileRun.objects.filter(namespace=namespace, name="flaky").order_by(
                    "started_at"
                )
            )[:3]
            if ReconcileRun.objects.filter(namespace=namespace, name="flaky").count() >= 3
            else None
        ),
        what="three failing runs",
    )
    assert [r.backoff_step for r in failing] == [0, 1, 2]
    for run in failing:
        assert run.outcome == "error" and run.next_due_at is not None
        assert run.next_due_at > run.finished_at
    backlog = queue_backlog("toy")
    assert backlog.backoff_count == 1 and backlog.backoff[0].key == f"toy/{namespace}/flaky"
    assert backlog.backoff[0].failures >= 3
