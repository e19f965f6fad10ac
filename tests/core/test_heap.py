"""Long-running processes freeze what they loaded at start (opsboard.heap), each in a fresh
interpreter: a freeze would otherwise hold the test process's own objects."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

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
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=60, check=True,
    )  # fmt: skip
    loaded: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


def test_freezing_collects_start_ups_garbage_then_freezes_the_rest() -> None:
    found = _probe(_FREEZE)
    assert found["cycle_freed"], "a cycle left from start-up would never be freed once frozen"
    assert found["frozen"] > 50_000, found  # Django and the apps


def test_a_prefork_worker_freezes_before_it_makes_a_pool_process() -> None:
    found = _probe(_WORKER)
    assert found["before"] == 0, found
    assert found["after"] > 50_000, found
