"""Queueing a key: the dedup step in Redis and, only if needed, one Celery task, pushed
by the same script (see opsboard.engine.publish)."""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings

from controllers.base import Key
from opsboard.engine import metrics
from opsboard.engine.publish import broker_queue, task_message
from opsboard.engine.queue import Why, connection, queue_for

RECONCILE_TASK = "opsboard.engine.tasks.reconcile"


def reconcile_task(key: Key, why: Why) -> bytes:
    """The message of the task that reconciles `key`."""
    return task_message(RECONCILE_TASK, [str(key), why.trigger, why.detail])


def send(key: Key, why: Why) -> None:
    send_many([(key, why)])


def send_many(items: Iterable[tuple[Key, Why]]) -> int:
    """`send` for each (key, why), in one round trip; returns how many."""
    tasks = [reconcile_task(key, why) for key, why in items]
    if tasks:  # LPUSH of many pushes them in order: the consumer's BRPOP takes the first first
        connection().lpush(broker_queue(), *tasks)
    return len(tasks)


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
    return queue.add(key, why, relabel=trigger == "manual", task=reconcile_task(key, why))


def reconcile_enqueue_many(items: list[tuple[Key, str, str]]) -> int:
    """reconcile_enqueue for a batch of (key, trigger, detail): one Redis round trip per
    controller, the dedup step and the tasks it sends. Returns how many tasks were sent."""
    by_controller: dict[str, list[tuple[Key, Why]]] = {}
    for key, trigger, detail in items:
        by_controller.setdefault(key.controller, []).append((key, Why(trigger, detail)))
    sent = 0
    for name, queued in by_controller.items():
        for _ in queued:
            metrics.queue_added(name)
        tasks = [reconcile_task(key, why) for key, why in queued]
        sent += sum(queue_for(name).add_many(queued, tasks))
    return sent


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
