"""A worker's database connections, kept from run to run; the watcher's, dropped when broken.

Every run is treated like a request: its thread keeps its connection for CONN_MAX_AGE
and health-checks it before use, closing it only when it is broken or too old. (Celery's
own fixup closes it around every task unless CELERY_DB_REUSE_MAX is set, as settings do:
on PostgreSQL that was a new backend per reconcile.)
"""

from __future__ import annotations

import contextlib
import threading
import time

from django.db import DatabaseError, connections

RECENTLY = 1.0  # seconds: a connection that worked this recently needs no health check


class _WorkedAt(threading.local):
    """When each of this thread's connections last served a run without error, by alias
    (time.monotonic()): Django's connections are per thread, and so is this."""

    def __init__(self) -> None:
        self.by_alias: dict[str, float] = {}


_worked_at = _WorkedAt()


def keep_sqlite_connection() -> None:
    """A pool process keeps its SQLite connection from run to run. Settings close it after
    each use (CONN_MAX_AGE 0), so each run opened one again: about 1.2 ms of CPU (a file
    open, two PRAGMAs, Django's SQL functions registered again), as much as two or three
    of a reconcile's queries. The connection is in autocommit between statements, so it
    holds no snapshot that would pin the WAL."""
    for conn in connections.all():
        if conn.vendor == "sqlite":
            conn.settings_dict["CONN_MAX_AGE"] = None


def run_starts() -> None:
    """Before a run. The health check is a `SELECT 1` round trip; a connection the run
    before used without error less than RECENTLY ago is known good, so a busy worker
    skips it (one query in seven of a run)."""
    now, worked_at = time.monotonic(), _worked_at.by_alias
    for conn in connections.all(initialized_only=True):
        conn.close_if_unusable_or_obsolete()
        if conn.connection is not None and now - worked_at.get(conn.alias, -RECENTLY) < RECENTLY:
            conn.health_check_done = True  # type: ignore[attr-defined]  # not in the stubs


def run_ends() -> None:
    worked_at = _worked_at.by_alias
    for conn in connections.all(initialized_only=True):
        if conn.connection is not None and not conn.errors_occurred:
            worked_at[conn.alias] = time.monotonic()
        else:
            worked_at.pop(conn.alias, None)
        conn.close_if_unusable_or_obsolete()


def close_if_broken() -> None:
    """After a database error in a thread that never ends (the watcher's heartbeat and
    mirror writer): closes this thread's connections that no longer work, so that the
    next attempt connects again. Django does this only between requests and tasks; without
    it a PostgreSQL restart left the watcher on its dead connections for good."""
    for conn in connections.all(initialized_only=True):
        if conn.connection is not None and not conn.is_usable():  # a `SELECT 1`, after errors only
            with contextlib.suppress(DatabaseError):  # closing a dead socket may complain
                conn.close()
