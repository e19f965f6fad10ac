"""Retrying what the database asks to retry, so it never surfaces to a reconcile.

PostgreSQL aborts one side of a deadlock (SQLSTATE 40P01) and, at SERIALIZABLE or
REPEATABLE READ, a transaction that lost a race (40001); both say "run me again". SQLite
says so with "database is locked" once its busy timeout is spent. Everything else is a
real error and is raised at once.

Wrap a whole transaction (or one autocommit statement), never a statement inside an
open transaction: after an error PostgreSQL refuses every statement until rollback.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

from django.db import DatabaseError, connection

log = logging.getLogger(__name__)

T = TypeVar("T")

RETRY_SQLSTATES = {"40001": "serialization failure", "40P01": "deadlock detected"}


def retry_reason(exc: BaseException) -> str:
    """Why `exc` deserves another try, or "" when it does not."""
    if not isinstance(exc, DatabaseError):
        return ""
    sqlstate = getattr(exc.__cause__, "sqlstate", None)
    if sqlstate in RETRY_SQLSTATES:
        return RETRY_SQLSTATES[sqlstate]
    if "database is locked" in str(exc):
        return "database is locked"
    return ""


def retrying(
    work: Callable[[], T], *, what: str, attempts: int = 6, first_delay: float = 0.01
) -> T:
    """Runs `work`, again after a jittered, doubling delay while the database asks to."""
    for attempt in range(1, attempts + 1):
        try:
            return work()
        except DatabaseError as exc:
            reason = retry_reason(exc)
            if not reason or attempt == attempts or connection.in_atomic_block:
                raise
            delay = first_delay * 2 ** (attempt - 1) * random.uniform(0.5, 1.5)
            log.info("%s: %s, attempt %d, again in %.3fs", what, reason, attempt, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")
