"""What every worker's main process does besides consuming tasks, on a small thread:

sends the keys whose retry/requeue time has come and those whose worker died, and
keeps a heartbeat in Redis (the fixture's readiness check and the UI's worker health).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from typing import Any

from celery import signals

from opsboard.engine.dispatch import send_due
from opsboard.engine.queue import connection

log = logging.getLogger(__name__)
PUMP_INTERVAL = 0.02  # seconds between looks at the delayed queue
ORPHAN_INTERVAL = 1.0
HEARTBEAT_INTERVAL = 2.0
HEARTBEAT_KEY = "opsboard:workers"  # hash: worker name → last heartbeat (unix time)

_stop = threading.Event()


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _loop() -> None:
    from opsboard.engine.services import controllers

    names = list(controllers())
    last_orphans = last_beat = 0.0
    while not _stop.wait(PUMP_INTERVAL):
        try:
            now = time.monotonic()
            send_due(names, sweep=now - last_orphans >= ORPHAN_INTERVAL)
            if now - last_orphans >= ORPHAN_INTERVAL:
                last_orphans = now
            if now - last_beat >= HEARTBEAT_INTERVAL:
                connection().hset(HEARTBEAT_KEY, worker_name(), time.time())
                last_beat = now
        except Exception:  # Redis restarting: keep trying, the queue lives there
            log.warning("Engine pump: Redis unavailable", exc_info=True)
            _stop.wait(1.0)


def _start(**_: Any) -> None:
    _stop.clear()
    connection().hset(HEARTBEAT_KEY, worker_name(), time.time())
    threading.Thread(target=_loop, name="opsboard-engine-pump", daemon=True).start()


def _stop_loop(**_: Any) -> None:
    _stop.set()
    try:
        connection().hdel(HEARTBEAT_KEY, worker_name())
    except Exception:
        log.warning("Could not clear this worker's heartbeat", exc_info=True)


def connect_signals() -> None:
    signals.worker_ready.connect(_start, weak=False, dispatch_uid="opsboard-engine-start")
    signals.worker_shutdown.connect(_stop_loop, weak=False, dispatch_uid="opsboard-engine-stop")


def workers_alive(*, within: float = 10.0) -> list[str]:
    """Names of the workers whose heartbeat is younger than `within` seconds."""
    beats = connection().hgetall(HEARTBEAT_KEY)
    cutoff = time.time() - within
    return sorted(name.decode() for name, at in beats.items() if float(at) >= cutoff)
