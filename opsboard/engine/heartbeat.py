"""The watcher's heartbeat row (mirror_watcherheartbeat): what pages read to tell whether a
watcher leads, which stand by, and why none can lead."""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta

from django.db import DatabaseError
from django.utils import timezone

from opsboard.engine.database import close_if_broken
from opsboard.engine.outage import Outage
from opsboard.mirror.models import WatcherHeartbeat

log = logging.getLogger("opsboard.watcher")
# A row not beaten for this long is a watcher that died without removing it (killed, a
# crashed pod): far past the pages' heartbeat timeout (30 s), so only the dead go.
PRUNE_AFTER = 600.0  # seconds
# The leader looks for such rows this often (an indexed read; a DELETE only if any): a
# DELETE per beat would take SQLite's one write lock every renewal for nothing.
PRUNE_EVERY = 60.0  # seconds


class Heartbeat:
    """One watcher's row, written from the thread that runs its Lease loop."""

    def __init__(self, identity: str, started: datetime) -> None:
        self.identity, self.started = identity, started
        self._outage = Outage(
            log, "Could not record the watcher heartbeat", recovered="Recorded it again"
        )
        self._pruned_at = float("-inf")  # time.monotonic()

    def beat(self, *, leader: bool, claim: bool = False, lease_error: str = "") -> None:
        """One UPDATE a beat (update_or_create was a transaction of four statements).
        `claim`, on taking the lease: only one row may say it leads, so a predecessor's row
        (one killed before it could say it no longer leads) is cleared then, not at every
        renewal, where an UPDATE of no row still takes SQLite's one write lock. A failure
        (the database down or restarted) is logged and its connection dropped if broken,
        so that the next beat connects again."""
        try:
            beat = {"is_leader": leader, "heartbeat_at": timezone.now(), "lease_error": lease_error}
            rows = WatcherHeartbeat.objects.filter(identity=self.identity)
            if not rows.update(**beat):
                WatcherHeartbeat.objects.create(
                    identity=self.identity, started_at=self.started, **beat
                )
            if claim:
                others = WatcherHeartbeat.objects.filter(is_leader=True).exclude(
                    identity=self.identity
                )
                others.update(is_leader=False)
            if leader and (claim or time.monotonic() >= self._pruned_at + PRUNE_EVERY):
                self._prune()
        except Exception as exc:  # the database down: the next beat tries again
            close_if_broken()
            self._outage.failed(exc)
        else:
            self._outage.worked()

    def _prune(self) -> None:
        """Removes the rows of watchers dead for PRUNE_AFTER: each restart of a killed one
        (a pod's, say) left one for good."""
        dead = WatcherHeartbeat.objects.filter(
            heartbeat_at__lt=timezone.now() - timedelta(seconds=PRUNE_AFTER)
        )
        if dead.exists():
            count, _ = dead.delete()
            log.info("Removed the heartbeat rows of %d watcher(s) gone for good", count)
        self._pruned_at = time.monotonic()

    def remove(self) -> None:
        """On a graceful stop. Once more on a fresh connection if the first attempt found it
        dead (the database restarted since the last beat); then a line, not a traceback:
        a leftover row is pruned by the next leader."""
        for attempt in (1, 2):
            try:
                WatcherHeartbeat.objects.filter(identity=self.identity).delete()
                return
            except DatabaseError as exc:
                close_if_broken()
                if attempt == 2:
                    log.warning("Could not remove the watcher heartbeat row (%s)", exc)
