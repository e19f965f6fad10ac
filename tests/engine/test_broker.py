"""The broker transport: kombu's Redis transport, one client per channel."""

from __future__ import annotations

from django.conf import settings
from kombu import Connection

from opsboard.engine.broker import Transport


def test_the_product_uses_it_for_a_plain_redis_url() -> None:
    assert settings.REDIS_URL.startswith("redis://")
    assert settings.CELERY_BROKER_TRANSPORT == "opsboard.engine.broker:Transport"


def test_messages_go_through_and_a_channel_keeps_one_client(redis_url: str) -> None:
    with Connection(redis_url, transport=Transport) as connection:
        channel = connection.default_channel
        client = channel._create_client()
        with connection.SimpleQueue("opsboard-broker-test") as queue:
            for n in range(3):
                queue.put({"n": n})
            got = [queue.get(timeout=5) for _ in range(3)]
            for message in got:
                message.ack()
        assert [message.payload for message in got] == [{"n": 0}, {"n": 1}, {"n": 2}]
        assert channel._create_client() is client
        assert channel._create_client(asynchronous=True) is not client
