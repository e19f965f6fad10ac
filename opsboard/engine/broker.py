"""kombu's Redis transport, with one Redis client per channel instead of one per command.

kombu wraps its connection pool in a new `redis.Redis` for every publish and every ack
(`Channel.conn_or_acquire`), and redis-py's constructor copies its table of a few hundred
response callbacks each time: a seventh of a worker's consumer CPU, and part of every
task the watcher sends. The pool and its connections are kombu's as before; a client is
a thread-safe handle on them, made again only if the channel replaced its pool.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis


class Channel(kombu_redis.Channel):
    _sync_client: Any = None

    def _create_client(self, asynchronous: bool = False) -> Any:
        if asynchronous:  # the consumer's own, kept by kombu already (Channel.client)
            return super()._create_client(asynchronous=True)  # type: ignore[no-untyped-call]
        if self._sync_client is None or self._sync_client.connection_pool is not self.pool:
            self._sync_client = super()._create_client()  # type: ignore[no-untyped-call]
        return self._sync_client


class Transport(kombu_redis.Transport):
    Channel = Channel
