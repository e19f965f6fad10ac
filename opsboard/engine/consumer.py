"""Keys popped straight from Redis by the worker's pool processes, and reconciled there.

A Celery task per key cost a change 3 to 6 ms before its reconcile began (the consumer's
BRPOP, kombu's bookkeeping of unacknowledged messages, the hand-over to a pool process)
and the worker's main process a fifth of its CPU. The work queue (opsboard.engine.queue)
holds all a message carried — which keys wait, why, and the lock that runs each once at a
time — so a key to run is pushed onto a plain list, the ready list of its Celery queue,
and a thread in each pool process pops it and runs it (the pop and the key's lock in one
round trip: queue.claim). Celery keeps the rest: the pool's processes (one is started
again when one exits), beat's resync, the pump.

Issue 5's guarantees carry over:
- No lost key. A key is marked queued in Redis before it is pushed, and only its run takes
  the mark (WorkQueue.start, queue.claim): a key popped by a process that died before
  taking its lock is still marked, and the stale sweep sends it again; a run whose process
  died leaves its lock to expire, and the orphan sweep retries it with backoff.
- One run per key: its lock, as before.
- Time limits: a reconcile still running after CELERY_TASK_SOFT_TIME_LIMIT is reported;
  after CELERY_TASK_TIME_LIMIT its process exits (code 70) and the pool starts another,
  as the prefork pool kills the process of a task past its hard limit. (Celery's soft
  limit raised an exception in the task; from another thread that could land anywhere,
  even after the run ended, so the soft limit only reports.)
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from typing import Any

import redis
from django.conf import settings

from controllers import trace
from controllers.base import Key
from opsboard.engine import database
from opsboard.engine.pinned_redis import PinnedRedis
from opsboard.engine.pump import EX_SOFTWARE  # as a stalled worker: supervisors restart it
from opsboard.engine.queue import Claimed, claim, ready_list
from opsboard.engine.runner import reconcile_key

log = logging.getLogger(__name__)
POP_TIMEOUT = 5  # seconds a pop waits before it looks whether to stop
WATCH_PERIOD = 1.0  # seconds between two looks at how long the running reconcile took


class KeyConsumer:
    """A thread that pops keys off the ready lists and reconciles them, one at a time."""

    def __init__(self, lists: list[str], name: str = "opsboard-key-consumer") -> None:
        self.lists = lists
        self.client = PinnedRedis.from_url(
            settings.REDIS_URL,
            socket_timeout=POP_TIMEOUT + 5,
            socket_connect_timeout=5,
            health_check_interval=30,
        )
        # Its own list, where each key it pops passes (queue.claim): unique to the thread.
        self.mine = f"{lists[0]}:claimed:{uuid.uuid4().hex}"
        self.stopping = threading.Event()
        self.running: tuple[Key, float] | None = None  # the key and time.monotonic() it began
        self.reported = False  # the running reconcile was reported past the soft limit
        self.thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def _loop(self) -> None:
        while not self.stopping.is_set():
            try:
                if len(self.lists) == 1:
                    self._claim_one()
                else:  # BLMOVE takes one list: pop, then start (two round trips)
                    self._pop_one()
            except redis.RedisError as exc:  # Redis restarting: the keys wait there
                log.warning("Key consumer: Redis unavailable (%s); trying again", exc)
                self.stopping.wait(1.0)
            except Exception:  # reconcile_key keeps a controller's errors; this is ours
                log.exception("Key consumer failed; going on")
                self.stopping.wait(1.0)

    def _claim_one(self) -> None:
        """Pops a key and takes its lock in one round trip (queue.claim)."""
        ttl = settings.OPSBOARD_LOCK_TTL
        claimed = claim(
            self.client, self.lists[0], self.mine, "event", ttl=ttl, timeout=POP_TIMEOUT
        )
        if claimed is not None:
            if trace.ON:
                trace.mark("popped", str(claimed.key))
            self._run(claimed.key, claimed)

    def _pop_one(self) -> None:
        popped = self.client.brpop(self.lists, timeout=POP_TIMEOUT)
        if popped is not None:
            key = os.fsdecode(popped[1])
            if trace.ON:
                trace.mark("popped", key)
            self._run(Key.parse(key))

    def _run(self, key: Key, claimed: Claimed | None = None) -> None:
        self.running, self.reported = (key, time.monotonic()), False
        try:  # with the database down, run_starts raises: the run is over all the same
            database.run_starts()
            reconcile_key(key=key, trigger="event", claimed=claimed)
        finally:
            self.running = None
            database.run_ends()

    def overdue(self, now: float) -> bool:
        """Reports a reconcile past the soft time limit; True when past the hard one."""
        running = self.running
        if running is None:
            return False
        key, began = running
        took = now - began
        if took >= settings.CELERY_TASK_SOFT_TIME_LIMIT and not self.reported:
            self.reported = True
            log.warning(
                "The reconcile of %s has run for %.0f s (soft time limit %d s); its process "
                "exits if it still runs after %d s",
                key,
                took,
                settings.CELERY_TASK_SOFT_TIME_LIMIT,
                settings.CELERY_TASK_TIME_LIMIT,
            )
        return took >= settings.CELERY_TASK_TIME_LIMIT


_consumers: list[KeyConsumer] = []


def _watch() -> None:
    """Ends this process when a reconcile in it passes the hard time limit: its thread
    cannot be stopped from outside, its key's lock expires once renewal stops, and the
    orphan sweep retries it with backoff."""
    while True:
        time.sleep(WATCH_PERIOD)
        for consumer in list(_consumers):
            if consumer.overdue(time.monotonic()):
                key = consumer.running[0] if consumer.running else "?"
                log.error(
                    "The reconcile of %s is past the hard time limit (%d s): ending this "
                    "process (pid %d) so that its pool starts another; the key is retried",
                    key,
                    settings.CELERY_TASK_TIME_LIMIT,
                    os.getpid(),
                )
                os._exit(EX_SOFTWARE)


def start(count: int, celery_queues: list[str]) -> None:
    """Starts `count` consumers in this process, for the ready lists of `celery_queues`."""
    lists = [ready_list(name) for name in celery_queues]
    for number in range(count):
        consumer = KeyConsumer(lists, name=f"opsboard-key-consumer-{number}")
        _consumers.append(consumer)
        consumer.thread.start()
    threading.Thread(target=_watch, name="opsboard-time-limits", daemon=True).start()


def stop(timeout: float) -> None:
    """Lets each consumer finish the reconcile it runs (within `timeout` seconds) and take
    no other. One waiting on an empty list is not waited for: if a key reaches it as the
    process exits, the stale sweep sends it again."""
    for consumer in _consumers:
        consumer.stopping.set()
    deadline = time.monotonic() + timeout
    for consumer in _consumers:
        if consumer.running is not None:
            consumer.thread.join(max(0.0, deadline - time.monotonic()))


def consumed_queues(app: Any) -> list[str]:
    """The Celery queues this worker consumes (-Q, else the default queue)."""
    return sorted(app.amqp.queues.consume_from or [app.conf.task_default_queue])
