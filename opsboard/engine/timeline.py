"""What a reconcile run served and how it got its turn: the triggers merged into it while
it waited, its backoff step. Kept beside the work queue, in Redis, in a list per key.

The dedup queue runs a key once however many events queued it, and keeps only the first
reason (controller-runtime throws the rest away: kube-rs#800). So the script that queues
a key also appends every trigger to a list beside it (opsboard.engine.queue), and the run
that starts takes the whole list: the events deduplicated into it, each with the object
that caused it. Triggers that arrive while it runs stay for the run they cause next.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from controllers.base import Key
from opsboard.engine.queue import queue_for


@dataclass(frozen=True)
class Trigger:
    trigger: str  # event, manual, ...
    detail: str  # "MODIFIED Pod shop/cache-7d9f-x2b4q"
    at: float  # unix time it was queued


@dataclass(frozen=True)
class RunStart:
    triggers: list[Trigger]  # oldest first, at most queue.TRIGGERS_KEPT
    dropped: int  # triggers beyond those, not kept
    failures: int  # consecutive failures before this run: its backoff step


def run_start(key: Key) -> RunStart:
    """Takes the key's triggers (they belong to this run now) and its failure count."""
    queue = queue_for(key.controller)
    pipe = queue.client.pipeline(transaction=True)
    pipe.lrange(queue.triggers(key), 0, -1)
    pipe.get(queue.trigger_count(key))
    pipe.delete(queue.triggers(key), queue.trigger_count(key))
    pipe.hget(queue.fails, str(key))
    raw, count, _, fails = pipe.execute()
    triggers = [
        Trigger(d["t"], d.get("d", ""), float(d.get("at", 0))) for d in map(orjson.loads, raw)
    ]
    return RunStart(triggers, max(int(count or 0) - len(triggers), 0), int(fails or 0))
