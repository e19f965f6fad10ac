"""A Redis client whose threads each keep the connection they first took.

redis-py takes a connection from its pool before every command and gives it back after:
the pool's lock, its counters and a poll of the socket for unread data, about a third of
the client's CPU per call (a queue script 142 → 96 µs here; 67 with hiredis parsing the
replies). A pool process makes several calls per reconcile, all from one thread, so here
each thread keeps one connection, and gives it back to the pool when it ends.

What the pool's poll guarded against, a reply left unread by a command cut short, cannot
reach the next command either: redis-py disconnects a connection whose send or read
failed, whatever the exception, and `execute_command` does the same for one raised
between the two (a signal's, say). The next command connects again.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import redis
from redis.connection import ConnectionPool


class _Held:
    """A thread's connection; given back to the pool when the thread's locals go."""

    def __init__(self, pool: ConnectionPool) -> None:
        self.pool, self.pid = pool, os.getpid()
        self.conn: Any = None
        self.conn = pool.get_connection()  # connects: raises while Redis is down

    def __del__(self) -> None:
        if self.conn is not None and self.pid == os.getpid():  # a child drops its parent's
            self.pool.release(self.conn)


class PinnedRedis(redis.Redis):
    """redis.Redis with one connection per thread (see the module's doc). Pipelines and
    pub/sub still take theirs from the pool."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("single_connection_client"):
            raise ValueError("PinnedRedis keeps a connection per thread already")
        self._held = threading.local()  # before redis.Redis sets `connection`
        super().__init__(*args, **kwargs)

    @property  # redis.Redis sets and reads this attribute; here it is per thread
    def connection(self) -> Any:
        held: _Held | None = getattr(self._held, "it", None)
        if held is None or held.pid != os.getpid():
            held = self._held.it = _Held(self.connection_pool)
        return held.conn

    @connection.setter
    def connection(self, value: Any) -> None:
        if value is not None:
            raise ValueError("PinnedRedis chooses its connections itself")

    def close(self) -> None:
        """Gives this thread's connection back (other threads' go when they end)."""
        if "_held" in self.__dict__:  # not when __init__ failed before it
            self._held.__dict__.pop("it", None)
        if self.auto_close_connection_pool:
            self.connection_pool.close()

    def execute_command(self, *args: Any, **options: Any) -> Any:
        try:
            return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]
        except redis.ResponseError:  # the server's error reply: read in full
            raise
        except BaseException:
            held: _Held | None = getattr(self._held, "it", None)
            if held is not None:
                held.conn.disconnect()
            raise
