"""Requests first: the simulated controllers give way to API requests being served.

kube-apiserver and kube-controller-manager are processes apart, so a busy controller
never holds a request up. Here both share one interpreter lock, and the controllers'
thread kept it for up to the switch interval (5 ms) each time a request's thread woke:
in a cold start of 1,000 CRs a Deployment's POST took 7.4 ms at p50 and 9.4 on average
(its PATCH takes 2.2-2.9 ms on a quiet kubesim), and the operators' reconciles mostly
waited on that. So, between two work items, the controllers' thread waits while
requests are in flight, for at most MAX_WAIT: a steady stream of requests slows the
cluster down, never stops it. Watches are not counted; they stay open for minutes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

MAX_WAIT = 0.005  # seconds per work item; measured against 2 ms (less gain) and none


class Serving:
    def __init__(self, max_wait: float = MAX_WAIT) -> None:
        self.max_wait = max_wait
        self._cond = threading.Condition(threading.Lock())
        self._in_flight = 0

    @contextmanager
    def request(self) -> Iterator[None]:
        """Around the serving of one request (not a watch)."""
        with self._cond:
            self._in_flight += 1
        try:
            yield
        finally:
            with self._cond:
                self._in_flight -= 1
                if not self._in_flight:
                    self._cond.notify_all()

    def give_way(self) -> None:
        """Called by the controllers' thread before each work item."""
        if not self._in_flight:  # read unlocked: a stale answer costs one item's wait, or none
            return
        with self._cond:
            self._cond.wait_for(lambda: not self._in_flight, self.max_wait)
