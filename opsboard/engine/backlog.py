"""Per controller, what waits: the queue's depth, its oldest waiting key and that key's age,
and the keys in backoff with their failures and next retry. Read from Redis for the UI."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from opsboard.engine.queue import Why, queue_for

SCAN_LIMIT = 2_000  # queued keys looked at for the oldest; a deeper queue says "at least"
BACKOFF_SHOWN = 5


@dataclass(frozen=True)
class InBackoff:
    key: str
    failures: int
    due_at: datetime | None


@dataclass(frozen=True)
class Backlog:
    controller: str
    depth: int
    oldest_key: str = ""
    oldest_age: float | None = None  # seconds
    backoff_count: int = 0
    backoff: list[InBackoff] = field(default_factory=list)  # the soonest due first


def queue_backlog(controller: str) -> Backlog:
    queue = queue_for(controller)
    client = queue.client
    depth = int(client.hlen(queue.queued))
    oldest_key, oldest_at = "", None
    for seen, (name, value) in enumerate(client.hscan_iter(queue.queued, count=500)):
        if seen >= SCAN_LIMIT:
            break
        at = Why.load(value).at
        if oldest_at is None or at < oldest_at:
            oldest_key, oldest_at = os.fsdecode(name), at
    fails = {os.fsdecode(k): int(v) for k, v in client.hgetall(queue.fails).items()}
    due = {}
    if fails:
        pipe = client.pipeline(transaction=False)
        shown = sorted(fails)[:SCAN_LIMIT]
        for key in shown:
            pipe.zscore(queue.delayed, key)
        due = dict(zip(shown, pipe.execute(), strict=True))
    backoff = sorted(
        (
            InBackoff(k, n, datetime.fromtimestamp(due[k] / 1000, UTC) if due.get(k) else None)
            for k, n in fails.items()
            if k in due
        ),
        key=lambda b: b.due_at or datetime.max.replace(tzinfo=UTC),
    )
    return Backlog(
        controller=controller,
        depth=depth,
        oldest_key=oldest_key,
        oldest_age=time.time() - oldest_at if oldest_at is not None else None,
        backoff_count=len(fails),
        backoff=backoff[:BACKOFF_SHOWN],
    )
