"""opsboard.engine.publish writes the message Celery's send_task would, byte for byte but
for its ids: checked against a real send_task onto a real redis-server, so that an
upgrade of Celery or kombu that changes the format fails here, not in production."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import redis
from celery import Celery

from opsboard.engine.publish import broker_queue, task_message

ARGS = ["memcached/ns/a", "event", "ADDED Memcached"]
TASK = "opsboard.engine.tasks.reconcile"
# Fresh per message (ids), per process (origin) or per client (reply_to); nothing reads
# reply_to when no result is kept.
PER_MESSAGE = {
    ("headers", "id"),
    ("headers", "root_id"),
    ("headers", "origin"),
    ("properties", "correlation_id"),
    ("properties", "delivery_tag"),
    ("properties", "reply_to"),
}


def _fields(message: dict[str, Any]) -> dict[tuple[str, str], Any]:
    flat = {
        (part, name): value
        for part in ("headers", "properties")
        for name, value in message[part].items()
    }
    flat["body", ""] = orjson.loads(base64.b64decode(message["body"]))
    flat["envelope", ""] = sorted(message)
    flat["envelope", "encoding"] = (message["content-type"], message["content-encoding"])
    return flat


def test_the_message_is_the_one_celery_sends(redis_url: str) -> None:
    # Database 15: no worker of the suite's consumes this list.
    url = redis_url.rsplit("/", 1)[0] + "/15"
    client = redis.Redis.from_url(url)
    client.delete(broker_queue())
    celery = Celery("publish-test", broker=url)
    celery.conf.update(task_serializer="json", task_default_queue=broker_queue())
    celery.send_task(TASK, args=ARGS)
    sent = orjson.loads(client.rpop(broker_queue()) or b"null")

    ours = orjson.loads(task_message(TASK, ARGS))

    theirs_fields, our_fields = _fields(sent), _fields(ours)
    assert theirs_fields.keys() == our_fields.keys()
    differing = {field for field in theirs_fields if theirs_fields[field] != our_fields[field]}
    assert differing <= PER_MESSAGE, differing
    assert ours["headers"]["id"] == ours["headers"]["root_id"]
    assert ours["headers"]["id"] == ours["properties"]["correlation_id"]
    assert ours["headers"]["id"] != orjson.loads(task_message(TASK, ARGS))["headers"]["id"]
