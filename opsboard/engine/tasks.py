"""Celery tasks and the worker's start-up: thin, passing keys (never objects) to the runner.

Keys are not Celery tasks: a worker's pool processes pop them from Redis themselves
(opsboard.engine.consumer). Celery runs the resync, and starts and stops those consumers.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task, signals
from celery.concurrency.prefork import TaskPool as PreforkPool
from django.conf import settings

from controllers.base import Key
from opsboard.celery import app
from opsboard.engine import consumer, database, pump, runner
from opsboard.engine.runlog import reconcile_runs_prune
from opsboard.heap import freeze_startup_objects

pump.connect_signals()


def _start_consumers(count: int) -> None:
    database.keep_sqlite_connection()
    consumer.start(count, consumer.consumed_queues(app))


def _pool_process_starts(**_: Any) -> None:
    """In each process of a prefork pool: one key consumer."""
    _start_consumers(1)


def _before_fork(**_: Any) -> None:
    """In a prefork worker, before each pool process is made: what is loaded by now is
    frozen in the worker and, inherited, in the pool process (opsboard.heap)."""
    freeze_startup_objects()


def _worker_ready(sender: Any = None, **_: Any) -> None:
    """Another pool (threads, solo) has no processes of its own: as many key consumers in
    the worker's process as its concurrency. Every pool: what the worker's start made is
    frozen too (opsboard.heap)."""
    freeze_startup_objects()
    pool = getattr(sender, "pool", None)
    if pool is not None and not isinstance(pool, PreforkPool):
        _start_consumers(max(1, int(pool.limit or 1)))


def _stop_consumers(**_: Any) -> None:
    """A pool process, or a worker running its consumers itself, stopping."""
    consumer.stop(timeout=settings.CELERY_TASK_TIME_LIMIT)


for _signal, _receiver in (
    (signals.worker_before_create_process, _before_fork),
    (signals.worker_process_init, _pool_process_starts),
    (signals.worker_process_shutdown, _stop_consumers),
    (signals.worker_ready, _worker_ready),
    (signals.worker_shutdown, _stop_consumers),
):
    _signal.connect(_receiver, weak=False, dispatch_uid=f"opsboard-{_receiver.__name__}")


def _task_starts(**_: Any) -> None:
    database.run_starts()


def _task_ends(**_: Any) -> None:
    database.run_ends()


signals.task_prerun.connect(_task_starts, weak=False, dispatch_uid="opsboard-reuse-db")
signals.task_postrun.connect(_task_ends, weak=False, dispatch_uid="opsboard-reuse-db-2")


@shared_task(name="opsboard.engine.tasks.reconcile", acks_late=True)
def reconcile(key: str, trigger: str = "event", detail: str = "") -> None:
    """A key sent as a task by an earlier version, still in the broker's queue after an
    upgrade (keys are popped from the ready list now, opsboard.engine.consumer)."""
    runner.reconcile_key(key=Key.parse(key), trigger=trigger, detail=detail)


@shared_task(name="opsboard.engine.tasks.resync")
def resync() -> int:
    """The safety net (Celery beat): every primary object again, spread with jitter."""
    reconcile_runs_prune()
    return runner.resync_all()
