"""What a reconcile run served and how it got its turn: the triggers merged into it while
it waited, its backoff step. Kept beside the work queue, in Redis, in a list per key.

The dedup queue runs a key once however many events queued it, and keeps only the first
reason (controller-runtime throws the rest away: kube-rs#800). So every trigger is also
appended here, and the run that starts takes the whole list: the events deduplicated into
it, each with the object that caused it. Triggers that arrive while it runs stay for the
run they cause next.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import orjson

from controllers.base import Key
from opsboard.engine.queue import Why, WorkQueue, queue_for

KEEP = 20  # triggers kept per key: a flood is summarised by its newest ones and a count
TTL_SECONDS = 86_400  # a key deleted while queued leaves no list behind for long


@dataclass(frozen=True)
class Trigger:
    trigger: str  # event, manual, ...
    detail: str  # "MODIFIED Pod shop/cache-7d9f-x2b4q"
    at: float  # unix time it was queued


@dataclass(frozen=True)
class RunStart:
    triggers: list[Trigger]  # oldest first, at most KEEP
    dropped: int  # triggers beyond KEEP, not kept
    failures: int  # consecutive failures before this run: its backoff step


def _list(queue: WorkQueue, key: Key) -> str:
    return f"{queue.queued}:triggers:{key}"


def _count(queue: WorkQueue, key: Key) -> str:
    return f"{queue.queued}:triggers-count:{key}"


def triggers_record(items: list[tuple[Key, Why]]) -> None:
    """Appends each (key, why) to its key's list: one round trip for a batch, and five
    commands per key however many of its triggers the batch holds (a Pod's start brings
    several changes of one CR's children in one batch)."""
    if not items:
        return
    by_key: dict[Key, list[str]] = {}
    now = time.time()
    for key, why in items:
        entry = orjson.dumps({"t": why.trigger, "d": why.detail, "at": why.at or now})
        by_key.setdefault(key, []).append(entry.decode())
    client = queue_for(items[0][0].controller).client
    pipe = client.pipeline(transaction=False)
    for key, entries in by_key.items():
        queue = queue_for(key.controller)
        name, count = _list(queue, key), _count(queue, key)
        pipe.rpush(name, *entries)
        pipe.ltrim(name, -KEEP, -1)
        pipe.expire(name, TTL_SECONDS)
        pipe.incrby(count, len(entries))
        pipe.expire(count, TTL_SECONDS)
    pipe.execute()


def run_start(key: Key) -> RunStart:
    """Takes the key's triggers (they belong to this run now) and its failure count."""
    queue = queue_for(key.controller)
    pipe = queue.client.pipeline(transaction=True)
    pipe.lrange(_list(queue, key), 0, -1)
    pipe.get(_count(queue, key))
    pipe.delete(_list(queue, key), _count(queue, key))
    pipe.hget(queue.fails, str(key))
    raw, count, _, fails = pipe.execute()
    triggers = [
        Trigger(d["t"], d.get("d", ""), float(d.get("at", 0))) for d in map(orjson.loads, raw)
    ]
    return RunStart(triggers, max(int(count or 0) - len(triggers), 0), int(fails or 0))
