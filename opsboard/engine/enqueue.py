"""Queueing a key: the dedup step in Redis and, only if needed, the key pushed onto the
ready list the pool processes pop (opsboard.engine.consumer), by the same script."""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings

from controllers.base import Key
from opsboard.engine import metrics
from opsboard.engine.queue import Why, connection, queue_for, ready_list, tick


def send(key: Key) -> None:
    send_many([key])


def send_many(keys: Iterable[Key]) -> int:
    """Pushes `keys` onto the ready list in one round trip; returns how many. Each is
    marked queued in Redis already, with its reason (WorkQueue.add and friends)."""
    names = [str(key) for key in keys]
    if names:  # LPUSH of many pushes them in order: BRPOP takes the first first
        connection().lpush(ready_list(), *names)
    return len(names)


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
    return queue.add(key, why, relabel=trigger == "manual", send=True)


def reconcile_enqueue_many(items: list[tuple[Key, str, str]]) -> int:
    """reconcile_enqueue for a batch of (key, trigger, detail): one Redis round trip per
    controller, the dedup step and the pushes it makes. Returns how many were pushed."""
    by_controller: dict[str, list[tuple[Key, Why]]] = {}
    for key, trigger, detail in items:
        by_controller.setdefault(key.controller, []).append((key, Why(trigger, detail)))
    sent = 0
    for name, queued in by_controller.items():
        for _ in queued:
            metrics.queue_added(name)
        sent += sum(queue_for(name).add_many(queued, send=True))
    return sent


def send_queued_before(controllers: list[str], cutoff: float) -> int:
    """Sends again each key queued before `cutoff` and not running (see
    WorkQueue.queued_before); returns how many were sent."""
    return send_many(
        key for name in controllers for key, _ in queue_for(name).queued_before(cutoff)
    )


def send_due(controllers: list[str], *, sweep: bool = True) -> int:
    """Sends the keys whose retry or requeue time has come; with `sweep`, first schedules
    retries of keys whose worker died, and re-sends those whose push was lost."""
    stale_after = settings.OPSBOARD_QUEUE_STALE_SECONDS if sweep else None
    ticks = tick([queue_for(name) for name in controllers], stale_after=stale_after)
    return send_many(key for t in ticks for key, _ in (*t.stale, *t.due))
