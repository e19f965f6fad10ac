"""Logging a failure that repeats, such as a database or Redis outage, without a flood.

A watcher retries every couple of seconds while a server is down; a traceback per attempt
was some 55 lines every 2 s per watcher. The first failure of an outage is logged with its
traceback, each next one in one line, and the recovery in one line.
"""

from __future__ import annotations

import logging


class Outage:
    """One repeating failure, for the one loop that retries it: `failing` is logged at each
    failure ("Could not record the watcher heartbeat"), `recovered` once it works again."""

    def __init__(self, log: logging.Logger, failing: str, *, recovered: str) -> None:
        self.log, self.failing, self.recovered = log, failing, recovered
        self.failures = 0

    def failed(self, exc: BaseException, *, then: str = "") -> None:
        """Logs a failure; `then` says what happens next ("retrying")."""
        self.failures += 1
        after = f"; {then}" if then else ""
        if self.failures == 1:
            self.log.warning("%s%s", self.failing, after, exc_info=exc)
            return
        lines = str(exc).strip().splitlines()
        self.log.warning(
            "%s (%s: %s; failure %d in a row)%s",
            self.failing,
            type(exc).__name__,
            lines[0] if lines else "",
            self.failures,
            after,
        )

    def worked(self) -> None:
        if self.failures:
            self.log.info("%s, after %d failure(s)", self.recovered, self.failures)
            self.failures = 0
