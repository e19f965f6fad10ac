"""Reads about the engine for the UI: live workers and queue depths, from Redis."""

from __future__ import annotations

from dataclasses import dataclass, field

import redis

from opsboard.engine.backlog import Backlog, queue_backlog
from opsboard.engine.pump import workers_alive
from opsboard.engine.registered import controllers


@dataclass(frozen=True)
class EngineHealth:
    reachable: bool  # False: Redis did not answer, nothing else is known
    workers: list[str]  # "host:pid" of worker processes with a fresh heartbeat
    depths: dict[str, int]  # controller → keys waiting
    backlogs: list[Backlog] = field(default_factory=list)  # oldest waiting key, backoff


def engine_health(*, within: float = 10.0) -> EngineHealth:
    try:
        backlogs = [queue_backlog(name) for name in controllers()]
        depths = {b.controller: b.depth for b in backlogs}
        return EngineHealth(True, workers_alive(within=within), depths, backlogs)
    except redis.RedisError:
        return EngineHealth(False, [], {})
