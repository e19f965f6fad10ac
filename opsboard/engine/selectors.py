"""Reads about the engine for the UI: live workers and queue depths, from Redis."""

from __future__ import annotations

from dataclasses import dataclass

import redis

from opsboard.engine.pump import workers_alive
from opsboard.engine.queue import queue_for
from opsboard.engine.registered import controllers


@dataclass(frozen=True)
class EngineHealth:
    reachable: bool  # False: Redis did not answer, nothing else is known
    workers: list[str]  # "host:pid" of worker processes with a fresh heartbeat
    depths: dict[str, int]  # controller → keys waiting


def engine_health(*, within: float = 10.0) -> EngineHealth:
    try:
        depths = {name: queue_for(name).depth() for name in controllers()}
        return EngineHealth(True, workers_alive(within=within), depths)
    except redis.RedisError:
        return EngineHealth(False, [], {})
