"""Long-running processes freeze what they loaded at start (opsboard.heap), each in a fresh
interpreter: a freeze would otherwise hold the test process's own objects."""

from __future__ import annotations

from typing import Any

from tests.support.probe import probe

_FREEZE = """
import gc, json, weakref
import django
django.setup()
from opsboard.heap import freeze_startup_objects

class Node:
    pass

gc.disable()  # only the call below may collect
cycle = Node(); cycle.me = cycle
dead = weakref.ref(cycle)
del cycle
frozen = freeze_startup_objects()
print(json.dumps({"frozen": frozen, "cycle_freed": dead() is None}))
"""

_WORKER = """
import gc, json
import django
django.setup()
from celery import signals
import opsboard.engine.tasks
before = gc.get_freeze_count()
signals.worker_before_create_process.send(sender=None)
print(json.dumps({"before": before, "after": gc.get_freeze_count()}))
"""


def _probe(code: str) -> dict[str, Any]:
    return probe(code, env={"DJANGO_SETTINGS_MODULE": "tests.settings"})


def test_freezing_collects_start_ups_garbage_then_freezes_the_rest() -> None:
    found = _probe(_FREEZE)
    assert found["cycle_freed"], "a cycle left from start-up would never be freed once frozen"
    assert found["frozen"] > 50_000, found  # Django and the apps


def test_a_prefork_worker_freezes_before_it_makes_a_pool_process() -> None:
    found = _probe(_WORKER)
    assert found["before"] == 0, found
    assert found["after"] > 50_000, found
