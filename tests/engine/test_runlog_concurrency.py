"""The reconcile log written by many workers while retention prunes it: every worker
trims its own key's old runs as pruning deletes the same rows. Nothing surfaces to the
writers, no new run is lost, nothing past retention stays."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from controllers.base import Key
from opsboard.engine.models import ReconcileRun
from opsboard.engine.runlog import RunRecord, reconcile_run_record, reconcile_runs_prune

pytestmark = pytest.mark.django_db(transaction=True)
KEEP = 5
WRITERS, KEYS_EACH, RUNS_EACH = 4, 3, 15


def record(key: Key, at: object, label: str) -> None:
    started = at if not isinstance(at, int) else timezone.now()
    reconcile_run_record(
        run=RunRecord(
            key=key,
            uid=f"uid-{key.name}",
            generation=1,
            trigger="event",
            trigger_detail="",
            worker="w",
            started_at=started,  # type: ignore[arg-type]
            finished_at=started,  # type: ignore[arg-type]
            outcome="success",
            requeue_after=None,
            error="",
            actions=[label],  # an action: never folded
        )
    )


@override_settings(OPSBOARD_RUNLOG_KEEP_PER_KEY=KEEP, OPSBOARD_RUNLOG_KEEP_DAYS=1)
def test_pruning_while_workers_write_runs_loses_no_new_run_and_surfaces_nothing() -> None:
    old = timezone.now() - timedelta(days=3)
    keys = [Key("toy", "ns", f"k{w}-{k}") for w in range(WRITERS) for k in range(KEYS_EACH)]
    for key in keys:  # history past retention, in every key the workers write
        for i in range(KEEP):
            record(key, old + timedelta(seconds=i), f"old {i}")
    for i in range(300):  # and in keys nobody writes any more
        record(Key("toy", "gone", f"g{i % 60}"), old + timedelta(seconds=i), f"old {i}")
    errors: list[BaseException] = []
    writing = threading.Event()
    pruned: list[int] = []

    def worker(mine: list[Key]) -> None:
        try:
            for n in range(RUNS_EACH):
                for key in mine:  # only the holder of a key's lock writes its runs
                    record(key, 0, f"new {n}")
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    def pruner() -> None:
        try:
            while writing.is_set():
                pruned.append(reconcile_runs_prune())
                time.sleep(0.01)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    writing.set()
    threads = [threading.Thread(target=pruner)]
    threads += [
        threading.Thread(target=worker, args=(keys[w * KEYS_EACH : (w + 1) * KEYS_EACH],))
        for w in range(WRITERS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads[1:]:
        thread.join(timeout=240)
    writing.clear()
    threads[0].join(timeout=60)
    assert not errors, errors
    assert sum(pruned) > 0, "pruning never ran while the workers wrote"
    for key in keys:
        kept = ReconcileRun.objects.filter(name=key.name).order_by("started_at")
        assert [r.actions[0] for r in kept] == [
            f"new {n}" for n in range(RUNS_EACH - KEEP, RUNS_EACH)
        ]
    assert not ReconcileRun.objects.filter(namespace="gone").exists()
