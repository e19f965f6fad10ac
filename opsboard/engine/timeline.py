"""What a reconcile run served and how it got its turn: the triggers merged into it while
it waited, its backoff step. Kept beside the work queue, in Redis, in a list per key.

The dedup queue runs a key once however many events queued it, and keeps only the first
reason (controller-runtime throws the rest away: kube-rs#800). So the script that queues
a key also appends every trigger to a list beside it (opsboard.engine.queue), and the run
that starts takes the whole list with its lock: the events deduplicated into it, each with
the object that caused it. Triggers that arrive while it runs stay for the run they cause
next.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from opsboard.engine.queue import Started


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


def run_start(started: Started) -> RunStart:
    """The triggers and backoff step the run took with its lock (WorkQueue.start)."""
    triggers = [
        Trigger(d["t"], d.get("d", ""), float(d.get("at", 0)))
        for d in map(orjson.loads, started.triggers)
    ]
    dropped = max(started.trigger_count - len(triggers), 0)
    return RunStart(triggers, dropped, started.failures)
