"""Celery tasks: thin, passing keys (never objects) to the runner."""

from __future__ import annotations

import time
from typing import Any

from celery import shared_task, signals
from django.db import connections

from controllers.base import Key
from opsboard.engine import pump, runner
from opsboard.engine.enqueue import RECONCILE_TASK
from opsboard.engine.runlog import reconcile_runs_prune

pump.connect_signals()


def _keep_sqlite_connection(**_: Any) -> None:
    """A pool process keeps its SQLite connection from task to task. Settings close it
    after each use (CONN_MAX_AGE 0), so each task opened one again: about 1.2 ms of CPU
    (a file open, two PRAGMAs, Django's SQL functions registered again), as much as two or
    three of a reconcile's queries. The connection is in autocommit between statements,
    so it holds no snapshot that would pin the WAL."""
    for alias in connections:
        settings_dict = connections[alias].settings_dict
        if settings_dict["ENGINE"] == "django.db.backends.sqlite3":
            settings_dict["CONN_MAX_AGE"] = None


signals.worker_process_init.connect(
    _keep_sqlite_connection, weak=False, dispatch_uid="opsboard-keep-sqlite-connection"
)


RECENTLY = 1.0  # seconds: a connection that worked this recently needs no health check
_worked_at: dict[str, float] = {}  # by alias, time.monotonic()


def _task_starts(**_: Any) -> None:
    """A task is treated like a request: its pool process keeps its connection for
    CONN_MAX_AGE and health-checks it before use, closing it only when it is broken or
    too old. (Celery's own fixup closes it around every task unless CELERY_DB_REUSE_MAX
    is set, as settings do: on PostgreSQL that was a new backend per reconcile.) The check
    is a `SELECT 1` round trip; a connection the task before used without error less than
    RECENTLY ago is known good, so a busy worker skips it (one query in seven of a run)."""
    now = time.monotonic()
    for conn in connections.all(initialized_only=True):
        conn.close_if_unusable_or_obsolete()
        if conn.connection is not None and now - _worked_at.get(conn.alias, -RECENTLY) < RECENTLY:
            conn.health_check_done = True  # type: ignore[attr-defined]  # not in the stubs


def _task_ends(**_: Any) -> None:
    for conn in connections.all(initialized_only=True):
        if conn.connection is not None and not conn.errors_occurred:
            _worked_at[conn.alias] = time.monotonic()
        else:
            _worked_at.pop(conn.alias, None)
        conn.close_if_unusable_or_obsolete()


signals.task_prerun.connect(_task_starts, weak=False, dispatch_uid="opsboard-reuse-db")
signals.task_postrun.connect(_task_ends, weak=False, dispatch_uid="opsboard-reuse-db-2")


@shared_task(name=RECONCILE_TASK, acks_late=True)
def reconcile(key: str, trigger: str = "event", detail: str = "") -> None:
    runner.reconcile_key(key=Key.parse(key), trigger=trigger, detail=detail)


@shared_task(name="opsboard.engine.tasks.resync")
def resync() -> int:
    """The safety net (Celery beat): every primary object again, spread with jitter."""
    reconcile_runs_prune()
    return runner.resync_all()
