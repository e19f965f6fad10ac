"""What every worker's main process does besides consuming tasks, on a small thread:

sends the keys whose retry/requeue time has come and those whose worker died, keeps a
heartbeat in Redis (the fixture's readiness check and the UI's worker health), and stops
the worker if its consumer has stalled (opsboard.engine.stall).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from typing import Any

import redis
from celery import signals
from celery.worker import state
from django.conf import settings

from opsboard.celery import app
from opsboard.engine.enqueue import send_due
from opsboard.engine.queue import WAKE_KEY, connection, queue_for
from opsboard.engine.stall import StallDetector

log = logging.getLogger(__name__)
# The pump sleeps until the next delayed key is due, the next sweep, or a wake-up pushed
# by whoever delays a key: idle, a look per ORPHAN_INTERVAL, not one per 20 ms (that
# polling was most of an idle worker's CPU and of Redis's).
MIN_WAIT = 0.002  # seconds: BLPOP's timeout 0 would mean "forever"
ORPHAN_INTERVAL = 1.0
HEARTBEAT_INTERVAL = 2.0
HEARTBEAT_KEY = "opsboard:workers"  # hash: worker name → last heartbeat (unix time)
EX_SOFTWARE = os.EX_SOFTWARE  # 70: "internal software error", so supervisors restart us
EXIT_GRACE = 15.0  # seconds a stalled worker gets to shut down warmly before it is ended

_stop = threading.Event()
_stall = StallDetector(limit=settings.OPSBOARD_QUEUE_STALE_SECONDS)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _loop() -> None:
    from opsboard.engine.registered import controllers

    names = list(controllers())
    last_orphans = last_beat = 0.0
    while not _stop.is_set():
        try:
            now = time.monotonic()
            send_due(names, sweep=now - last_orphans >= ORPHAN_INTERVAL)
            if now - last_orphans >= ORPHAN_INTERVAL:
                last_orphans = now
                _check_consuming()
            if now - last_beat >= HEARTBEAT_INTERVAL:
                connection().hset(HEARTBEAT_KEY, worker_name(), time.time())
                last_beat = now
            _sleep(names, until=last_orphans + ORPHAN_INTERVAL)
        except redis.RedisError as exc:  # Redis restarting: keep trying, the queue lives there
            log.warning("Engine pump: Redis unavailable (%s); trying again", exc)
            _stop.wait(1.0)
        except Exception:
            log.exception("Engine pump failed; trying again")
            _stop.wait(1.0)


def _sleep(names: list[str], *, until: float) -> None:
    """Until `until` (monotonic), the next due key of any controller, or a wake-up."""
    wait = until - time.monotonic()
    dues = [queue_for(name).next_due_ms for name in names]
    if known := [due for due in dues if due is not None]:
        wait = min(wait, (min(known) - time.time() * 1000) / 1000)
    if wait > MIN_WAIT:
        connection().blpop([WAKE_KEY], timeout=wait)


def _check_consuming() -> None:
    """Ends this worker if reconcile tasks wait for it and it takes none (see stall.py).

    The broker is the engine's Redis (CELERY_BROKER_URL is REDIS_URL), and reconcile
    tasks carry no priority, so they wait in the one list named after the queue."""
    backlog = connection().llen(app.conf.task_default_queue)
    if not _stall.stalled(backlog=backlog, busy=bool(state.reserved_requests)):
        return
    log.error(
        "This worker has received no task for %.0f s while %d wait in the broker queue %r "
        "and it is idle: its consumer has stalled (it happens after a Redis restart). "
        "Exiting so that it is restarted.",
        time.monotonic() - _stall.last_received,
        backlog,
        app.conf.task_default_queue,
    )
    _stop.set()
    state.should_stop = EX_SOFTWARE  # a warm shutdown, with a failing exit code
    # A consumer wedged hard enough may never look at should_stop again.
    last_resort = threading.Timer(EXIT_GRACE, os._exit, args=(EX_SOFTWARE,))
    last_resort.daemon = True
    last_resort.start()


def _received(**_: Any) -> None:
    _stall.received()


def _start(**_: Any) -> None:
    _stop.clear()
    _stall.received()  # count the idle wait from start-up, not from import
    connection().hset(HEARTBEAT_KEY, worker_name(), time.time())
    threading.Thread(target=_loop, name="opsboard-engine-pump", daemon=True).start()


def _stop_loop(**_: Any) -> None:
    _stop.set()
    try:
        connection().hdel(HEARTBEAT_KEY, worker_name())
    except redis.RedisError as exc:  # it expires by itself (workers_alive's `within`)
        log.warning("Could not clear this worker's heartbeat: %s", exc)


def connect_signals() -> None:
    signals.worker_ready.connect(_start, weak=False, dispatch_uid="opsboard-engine-start")
    signals.task_received.connect(_received, weak=False, dispatch_uid="opsboard-engine-received")
    signals.worker_shutdown.connect(_stop_loop, weak=False, dispatch_uid="opsboard-engine-stop")


def workers_alive(*, within: float = 10.0) -> list[str]:
    """Names of the workers whose heartbeat is younger than `within` seconds."""
    beats = connection().hgetall(HEARTBEAT_KEY)
    cutoff = time.time() - within
    return sorted(os.fsdecode(name) for name, at in beats.items() if float(at) >= cutoff)
