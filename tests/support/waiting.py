"""Waiting in tests, the one way: poll a check, never sleep a fixed time to prove anything.

    wait_for(lambda: api.get(CONFIGMAP, ns, "a"), what="the ConfigMap")  # something happens
    consistently(lambda: run_count() == 1, for_s=1.0, what="no retry")   # nothing happens
    settled(run_count, for_s=0.5)                                        # things stop happening

Timeouts are generous (60 s: a loaded 2-core machine may run several suites at once) and a failure
names what was awaited and the last value seen; no test asserts a duration.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
INTERVAL = 0.05  # seconds between looks


def wait_for(
    check: Callable[[], T],
    *,
    timeout: float = 60.0,
    what: str = "condition",
    interval: float = INTERVAL,
    ignoring: tuple[type[BaseException], ...] = (),
) -> T:
    """Polls `check` until it returns something truthy, and returns that value.

    `ignoring`: exceptions that mean "not yet" (a resource not served yet, say).
    """
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = check()
        except ignoring as exc:
            last = exc
        else:
            if last:
                return last
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}; last: {last!r}")
        time.sleep(interval)


def consistently(
    check: Callable[[], Any], *, for_s: float, what: str = "condition", interval: float = INTERVAL
) -> None:
    """Fails as soon as `check` returns something falsy within `for_s` seconds: proves that
    nothing happens (no extra run, no write) for that long, and says when it did."""
    start = time.monotonic()
    while True:
        value = check()
        if not value:
            after = time.monotonic() - start
            raise AssertionError(f"{what} stopped holding after {after:.2f}s: {value!r}")
        if time.monotonic() - start >= for_s:
            return
        time.sleep(interval)


def settled(
    read: Callable[[], T], *, for_s: float, timeout: float = 60.0, what: str = "value"
) -> T:
    """Waits until `read()` keeps one value for `for_s` seconds (runs have stopped coming,
    say), and returns it; fails if it is still changing after `timeout`."""
    deadline = time.monotonic() + timeout
    value, since = read(), time.monotonic()
    while time.monotonic() - since < for_s:
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} still changing after {timeout:g}s; last: {value!r}")
        time.sleep(INTERVAL)
        now = read()
        if now != value:
            value, since = now, time.monotonic()
    return value
