"""The resync: every primary object queued again (with jitter), except permanent errors."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.base import Key
from opsboard.engine.queue import queue_for
from opsboard.engine.runner import resync_all
from opsboard.mirror.writer import mirror_apply
from tests.engine.toy import TOY
from tests.fixtures.celery import _point_this_process_at
from tests.mirror.factories import obj

pytestmark = pytest.mark.django_db


def test_resync_queues_every_primary_but_a_permanent_error_on_the_same_version(
    redis_url: str, settings: Any
) -> None:
    _point_this_process_at(redis_url)
    settings.OPSBOARD_CONTROLLERS = ["tests.engine.toy"]
    toys = [obj(TOY, name, namespace="ns") for name in ("a", "b", "c")]
    mirror_apply(kind=TOY, events=[("ADDED", body) for body in toys])
    queue = queue_for("toy")
    queue.mark_permanent(Key("toy", "ns", "c"), toys[2]["metadata"]["resourceVersion"])
    assert resync_all(jitter=0) == 2
    due = queue.due()
    assert sorted(str(key) for key, _ in due) == ["toy/ns/a", "toy/ns/b"]
    assert {why.trigger for _, why in due} == {"resync"}
