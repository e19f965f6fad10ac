"""Reconcile tasks written straight onto the broker's list: Celery's own message, made here.

`send_task` builds each message through Celery's router and AMQP layer and kombu's
producer, channel and encoder: a sixth of the watcher's CPU on a real cluster, for a
message that differs from the one before only in its ids and arguments. This writes the
same bytes kombu's Redis transport would (task protocol 2 in kombu's JSON envelope, on
the list named after the default queue, priority 0), so that the script that queues a
key can push its task in the same round trip (opsboard.engine.queue). The broker is the
engine's Redis (CELERY_BROKER_URL is REDIS_URL). tests/engine/test_publish.py holds it to
what Celery makes, field by field.
"""

from __future__ import annotations

import base64
import uuid
from functools import cache
from typing import Any

import orjson
from celery.utils.nodenames import anon_nodename

from opsboard.celery import app

# The "embed" part of a protocol 2 body: no callbacks, errbacks, chain or chord.
_EMBED = {"callbacks": None, "errbacks": None, "chain": None, "chord": None}


@cache
def broker_queue() -> str:
    """The Redis list the workers consume reconcile tasks from."""
    return str(app.conf.task_default_queue)


@cache
def _origin() -> str:
    return str(anon_nodename())


def task_message(task: str, args: list[Any]) -> bytes:
    """One task message, ready to LPUSH onto broker_queue()."""
    task_id = str(uuid.uuid4())
    body = orjson.dumps([args, {}, _EMBED])
    return orjson.dumps(
        {
            "body": base64.b64encode(body).decode(),
            "content-encoding": "utf-8",
            "content-type": "application/json",
            "headers": {
                "lang": "py",
                "task": task,
                "id": task_id,
                "shadow": None,
                "eta": None,
                "expires": None,
                "group": None,
                "group_index": None,
                "retries": 0,
                "timelimit": [None, None],
                "root_id": task_id,
                "parent_id": None,
                "argsrepr": repr(args),
                "kwargsrepr": "{}",
                "origin": _origin(),
                "ignore_result": None,
                "replaced_task_nesting": 0,
                "stamped_headers": None,
                "stamps": {},
            },
            "properties": {
                "correlation_id": task_id,
                "reply_to": "",
                "delivery_mode": 2,
                "delivery_info": {"exchange": "", "routing_key": broker_queue()},
                "priority": 0,
                "body_encoding": "base64",
                "delivery_tag": str(uuid.uuid4()),
            },
        }
    )
