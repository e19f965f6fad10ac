"""Holding back a status write that only reports a rollout's progress (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from controllers.conditions import TIME_FORMAT
from controllers.progress import PROGRESS_BATCH_SECONDS, progress_wait

NOW = datetime(2026, 11, 23, 12, 0, 10, tzinfo=UTC)


def _status(
    *, nodes: list[str], ready: int, progressing: tuple[str, str] | None, since: float = 0.5
) -> dict[str, Any]:
    at = (NOW - timedelta(seconds=since)).strftime(TIME_FORMAT)
    conditions = [
        {
            "type": "Available",
            "status": "False",
            "reason": "PodsNotReady",
            "lastTransitionTime": at,
        },
        {"type": "Degraded", "status": "False", "reason": "AsExpected", "lastTransitionTime": at},
    ]
    if progressing:
        reason, status = progressing
        conditions.append(
            {"type": "Progressing", "status": status, "reason": reason, "lastTransitionTime": at}
        )
    return {
        "nodes": nodes,
        "readyReplicas": ready,
        "observedGeneration": 2,
        "conditions": conditions,
    }


def test_a_new_pod_still_starting_early_in_a_rollout_waits() -> None:
    written = _status(nodes=["a"], ready=1, progressing=("ScalingUp", "True"), since=0.5)
    wanted = _status(nodes=["a", "b"], ready=1, progressing=("PodsStarting", "True"), since=0.5)
    wait = progress_wait(written, wanted, now=NOW)
    assert wait is not None and 0 < wait <= PROGRESS_BATCH_SECONDS


def test_the_same_progress_is_written_once_the_wait_is_over() -> None:
    written = _status(nodes=["a"], ready=1, progressing=("ScalingUp", "True"), since=5)
    wanted = _status(nodes=["a", "b"], ready=1, progressing=("PodsStarting", "True"), since=5)
    assert progress_wait(written, wanted, now=NOW) is None


def test_readiness_a_new_generation_or_a_flipped_condition_is_written_at_once() -> None:
    written = _status(nodes=["a"], ready=1, progressing=("ScalingUp", "True"))
    ready = _status(nodes=["a", "b"], ready=2, progressing=("ScalingUp", "True"))
    assert progress_wait(written, ready, now=NOW) is None
    newer = {**written, "observedGeneration": 3}
    assert progress_wait(written, newer, now=NOW) is None
    done = _status(nodes=["a", "b"], ready=1, progressing=("RolloutComplete", "False"))
    assert progress_wait(written, done, now=NOW) is None
    starting = _status(nodes=["a"], ready=1, progressing=None)
    assert progress_wait(starting, written, now=NOW) is None, "Progressing turning True"


def test_a_first_status_and_an_unchanged_one_are_not_held() -> None:
    wanted = _status(nodes=["a"], ready=0, progressing=("ScalingUp", "True"))
    assert progress_wait({}, wanted, now=NOW) is None
    assert progress_wait(wanted, wanted, now=NOW) is None
