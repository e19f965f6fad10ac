"""The worker's pump sleeps until a delayed key is due or someone delays one, instead of
polling Redis every 20 ms; a delayed key still runs, and an idle worker stays quiet."""

from __future__ import annotations

import time
from typing import Any

import pytest
import redis

from controllers.base import Key
from opsboard.engine.queue import Why, queue_for
from tests.engine.test_guarantees import runs
from tests.engine.toy import TOY, toy
from tests.fixtures.celery import EngineProcesses
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _scripts_run(client: redis.Redis) -> int:
    stats: dict[str, Any] = client.info("commandstats")
    return sum(int(stats.get(f"cmdstat_{c}", {}).get("calls", 0)) for c in ("evalsha", "eval"))


def test_an_idle_worker_looks_at_the_queues_about_once_a_second(
    engine: EngineProcesses, redis_url: str
) -> None:
    engine.controllers = "tests.engine.toy"
    engine.start_worker(concurrency=1)
    client = redis.Redis.from_url(redis_url)
    time.sleep(1.0)  # past start-up
    before, began = _scripts_run(client), time.monotonic()
    time.sleep(3.0)
    per_second = (_scripts_run(client) - before) / (time.monotonic() - began)
    # One controller: the due pump and the orphan sweep once a second (polling: 50+ a second).
    assert per_second < 10, per_second


def test_a_key_delayed_while_the_pump_sleeps_is_run_when_due(
    engine: EngineProcesses, api: Any, namespace: str, toy_crd: None
) -> None:
    engine.controllers = "tests.engine.toy"
    engine.start_worker(concurrency=1)
    api.create(TOY, toy("late", namespace))
    time.sleep(1.5)  # the pump is asleep by now, with nothing delayed
    queue_for("toy").add_after(Key("toy", namespace, "late"), 0.3, Why("requeue", "test"))
    [run] = wait_for(lambda: runs(namespace, "late"), what="the delayed key's run")
    assert run.trigger == "requeue"
