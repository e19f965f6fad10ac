"""The work queue the simulated controllers share: keyed, deduplicated, with delays.

One worker thread drains it, so two controllers never act on the cluster at the
same time; each item is (controller name, key). A controller's group can be
paused: its items are held, not lost, and run when the group resumes.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable

log = logging.getLogger(__name__)

Item = tuple[str, Hashable]
Handler = Callable[[str, Hashable], float | None]


class WorkQueue:
    def __init__(
        self,
        handle: Handler,
        group_of: Callable[[str], str],
        give_way: Callable[[], None] = lambda: None,
    ) -> None:
        self._handle = handle
        self._group_of = group_of
        self._give_way = give_way  # before each item: see kubesim.serving
        self._cond = threading.Condition()
        self._ready: deque[Item] = deque()
        self._queued: set[Item] = set()
        self._timers: list[tuple[float, int, Item]] = []
        self._seq = itertools.count()
        self._paused: set[str] = set()
        self._held: dict[str, set[Item]] = {}
        self._failures: dict[Item, int] = {}
        self._thread: threading.Thread | None = None
        self._stopping = False

    def add(self, controller: str, key: Hashable) -> None:
        item = (controller, key)
        with self._cond:
            if item in self._queued:
                return
            self._queued.add(item)
            self._ready.append(item)
            self._cond.notify()

    def add_after(self, controller: str, key: Hashable, delay: float) -> None:
        if delay <= 0:
            self.add(controller, key)
            return
        with self._cond:
            heapq.heappush(
                self._timers, (time.monotonic() + delay, next(self._seq), (controller, key))
            )
            self._cond.notify()

    def pause(self, group: str) -> None:
        with self._cond:
            self._paused.add(group)

    def resume(self, group: str) -> None:
        with self._cond:
            self._paused.discard(group)
            held = self._held.pop(group, set())
        for controller, key in held:
            self.add(controller, key)

    def paused(self) -> set[str]:
        with self._cond:
            return set(self._paused)

    def start(self) -> None:
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="kubesim-cluster", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def _next(self) -> Item | None:
        with self._cond:
            while not self._stopping:
                now = time.monotonic()
                while self._timers and self._timers[0][0] <= now:
                    _, _, item = heapq.heappop(self._timers)
                    if item not in self._queued:
                        self._queued.add(item)
                        self._ready.append(item)
                while self._ready:
                    item = self._ready.popleft()
                    self._queued.discard(item)
                    group = self._group_of(item[0])
                    if group in self._paused:
                        self._held.setdefault(group, set()).add(item)
                        continue
                    return item
                timeout = self._timers[0][0] - now if self._timers else None
                self._cond.wait(timeout)
            return None

    def _run(self) -> None:
        while (item := self._next()) is not None:
            self._give_way()
            try:
                requeue = self._handle(*item)
            except Exception:
                failures = self._failures.get(item, 0) + 1
                self._failures[item] = failures
                log.exception("Reconcile of %s %s failed (attempt %d)", item[0], item[1], failures)
                requeue = min(0.05 * 2**failures, 5.0)
            else:
                self._failures.pop(item, None)
            if requeue is not None:
                self.add_after(*item, requeue)
