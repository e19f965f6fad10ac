"""Celery tasks: thin, passing keys (never objects) to the services."""

from __future__ import annotations

from celery import shared_task

from controllers.base import Key
from opsboard.engine import services, worker
from opsboard.engine.runlog import reconcile_runs_prune

worker.connect_signals()


@shared_task(name="opsboard.engine.tasks.reconcile", acks_late=True)
def reconcile(key: str, trigger: str = "event", detail: str = "") -> None:
    services.reconcile_key(key=Key.parse(key), trigger=trigger, detail=detail)


@shared_task(name="opsboard.engine.tasks.resync")
def resync() -> int:
    """The safety net (Celery beat): every primary object again, spread with jitter."""
    reconcile_runs_prune()
    return services.resync_all()
