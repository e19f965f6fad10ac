"""PinnedRedis, one connection per thread, against a real redis-server."""

from __future__ import annotations

import gc
import os
import signal
import threading

import pytest
import redis

from opsboard.engine.pinned_redis import PinnedRedis
from tests.support.waiting import wait_for


def _client_id(client: redis.Redis) -> int:
    return int(client.client_id())


def _no_pop_blocked(other: redis.Redis) -> None:
    """Until the server has seen the cut connection go (a pop left blocked on it would
    take the next item and leave its reply for the next command)."""
    wait_for(lambda: other.info("clients")["blocked_clients"] == 0, timeout=10, what="no pop")


def test_a_thread_keeps_its_connection_and_threads_do_not_share(redis_url: str) -> None:
    client = PinnedRedis.from_url(redis_url)
    first = _client_id(client)
    assert _client_id(client) == first  # the same connection, command after command
    seen: list[int] = []
    thread = threading.Thread(target=lambda: seen.append(_client_id(client)))
    thread.start()
    thread.join()
    assert seen and seen[0] != first
    del thread
    gc.collect()
    # the ended thread's connection went back to the pool: the next thread takes it
    again: list[int] = []
    thread = threading.Thread(target=lambda: again.append(_client_id(client)))
    thread.start()
    thread.join()
    assert again == seen


def test_a_command_cut_short_leaves_no_reply_for_the_next(redis_url: str) -> None:
    """A blocking pop the client gave up on: its late reply must not answer the GET."""
    client = PinnedRedis.from_url(redis_url, socket_timeout=0.2)
    other = redis.Redis.from_url(redis_url)
    other.set("x", "the value")
    with pytest.raises(redis.TimeoutError):
        client.blpop(["list"], timeout=30)
    _no_pop_blocked(other)
    other.lpush("list", "an item")
    assert client.get("x") == b"the value"
    assert other.lrange("list", 0, -1) == [b"an item"]


class _Interrupted(Exception):
    pass


def test_a_command_interrupted_leaves_no_reply_for_the_next(redis_url: str) -> None:
    """The same, cut short by an exception from a signal handler (as a time limit's)."""
    client = PinnedRedis.from_url(redis_url)
    other = redis.Redis.from_url(redis_url)
    other.set("x", "the value")

    def interrupt(signum: int, frame: object) -> None:
        raise _Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with pytest.raises(_Interrupted):
            client.blpop(["list"], timeout=30)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    _no_pop_blocked(other)
    other.lpush("list", "an item")
    assert client.get("x") == b"the value"
    assert other.lrange("list", 0, -1) == [b"an item"]


def test_an_error_reply_keeps_the_connection(redis_url: str) -> None:
    client = PinnedRedis.from_url(redis_url)
    before = _client_id(client)
    client.set("s", "a string")
    with pytest.raises(redis.ResponseError):
        client.lpush("s", "x")  # WRONGTYPE
    assert _client_id(client) == before


def test_a_forked_child_connects_anew(redis_url: str) -> None:
    client = PinnedRedis.from_url(redis_url)
    parent = _client_id(client)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: writes its connection's id
        try:
            os.write(write, str(_client_id(client)).encode())
        finally:
            os._exit(0)
    os.close(write)
    child = int(os.read(read, 64) or b"0")
    os.close(read)
    assert os.waitpid(pid, 0)[1] == 0
    assert child not in (0, parent)
    assert _client_id(client) == parent  # the parent's connection is still its own


def test_close_gives_the_connection_back(redis_url: str) -> None:
    client = PinnedRedis.from_url(redis_url)
    client.ping()
    pool = client.connection_pool
    client.close()
    assert pool._in_use_connections == set()  # type: ignore[attr-defined]
