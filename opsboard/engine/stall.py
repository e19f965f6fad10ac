"""Notices a worker whose consumer stopped taking tasks, so it can exit and be restarted.

After Redis restarts, a Celery worker whose late ack failed can stay connected and yet
never take another message (celery#9054 and its kin). Nothing inside the worker notices,
and the pump thread keeps its heartbeat fresh. So the pump watches for the symptom
itself: reconcile tasks waiting in the broker while this worker is idle and receives
none, for longer than OPSBOARD_QUEUE_STALE_SECONDS. A healthy idle worker would have
taken them within milliseconds; a stuck one is better restarted (by `make run`'s
supervisor or the kubelet) than left holding the queue.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class StallDetector:
    """Decides, from what one worker sees, whether its consumer has stalled.

    Pure bookkeeping: the caller tells it when a task arrives (`received`) and, every so
    often, how many tasks wait in the broker and whether this worker is busy (`stalled`).
    """

    limit: float  # seconds tasks may wait, with this worker idle, before it gives up
    last_received: float = field(default_factory=time.monotonic)
    waiting_since: float | None = None  # since when tasks wait while we are idle

    def received(self, now: float | None = None) -> None:
        self.last_received = time.monotonic() if now is None else now

    def stalled(self, *, backlog: int, busy: bool, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        if busy or backlog <= 0:
            self.waiting_since = None  # a busy worker is not expected to take more
            return False
        if self.waiting_since is None or self.last_received >= self.waiting_since:
            self.waiting_since = now  # the wait starts (again) from here
            return False
        return now - self.waiting_since > self.limit
