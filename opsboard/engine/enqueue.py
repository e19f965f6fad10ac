"""Queueing a key: the dedup step in Redis, then (only if needed) one Celery task."""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings

from controllers.base import Key
from opsboard.celery import app
from opsboard.engine import metrics
from opsboard.engine.queue import Why, queue_for

RECONCILE_TASK = "opsboard.engine.tasks.reconcile"


def send(key: Key, why: Why) -> None:
    app.send_task(RECONCILE_TASK, args=[str(key), why.trigger, why.detail])


def send_many(items: Iterable[tuple[Key, Why]]) -> int:
    """`send` for each (key, why), over one producer connection; returns how many."""
    items = list(items)
    if items:
        with app.producer_or_acquire() as producer:
            for key, why in items:
                app.send_task(
                    RECONCILE_TASK, args=[str(key), why.trigger, why.detail], producer=producer
                )
    return len(items)


def reconcile_enqueue(
    *, key: Key, trigger: str = "manual", detail: str = "", delay: float = 0.0
) -> bool:
    """Asks for a reconcile of `key`; False when it was already queued (deduplicated).

    The UI's "Reconcile now" calls this with trigger="manual"; the watcher with "event".
    A manual request for a key already queued relabels it, so its run shows as manual.
    """
    queue, why = queue_for(key.controller), Why(trigger, detail)
    metrics.queue_added(key.controller)
    if delay > 0:
        queue.add_after(key, delay, why)
        return True
    if queue.add(key, why, relabel=trigger == "manual"):
        send(key, why)
        return True
    return False


def reconcile_enqueue_many(items: list[tuple[Key, str, str]]) -> int:
    """reconcile_enqueue for a batch of (key, trigger, detail): one Redis round trip per
    controller for the dedup step, and the tasks sent over one producer connection.
    Returns how many tasks were sent."""
    by_controller: dict[str, list[tuple[Key, Why]]] = {}
    for key, trigger, detail in items:
        by_controller.setdefault(key.controller, []).append((key, Why(trigger, detail)))
    to_send: list[tuple[Key, Why]] = []
    for name, queued in by_controller.items():
        for _ in queued:
            metrics.queue_added(name)
        results = queue_for(name).add_many(queued)
        to_send.extend(item for item, send_it in zip(queued, results, strict=True) if send_it)
    return send_many(to_send)


def send_queued_before(controllers: list[str], cutoff: float) -> int:
    """Sends a task again for each key queued before `cutoff` and not running (see
    WorkQueue.queued_before); returns how many were sent."""
    return send_many(item for name in controllers for item in queue_for(name).queued_before(cutoff))


def send_due(controllers: list[str], *, sweep: bool = True) -> int:
    """Sends the keys whose retry or requeue time has come; with `sweep`, first schedules
    retries of keys whose worker died, and re-sends those whose task was lost."""
    to_send: list[tuple[Key, Why]] = []
    for name in controllers:
        queue = queue_for(name)
        if sweep:
            queue.orphans()
            to_send.extend(queue.stale(settings.OPSBOARD_QUEUE_STALE_SECONDS))
        to_send.extend(queue.due())
    return send_many(to_send)
