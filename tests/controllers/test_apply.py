from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, cast

from controllers.apply import (
    RECHECK_MAX_SECONDS,
    RECHECK_MIN_SECONDS,
    TIME_FORMAT,
    finish,
    recheck_after,
    settle,
)
from controllers.base import Context, Key
from controllers.memcached.desired import MEMCACHED
from tests.controllers.cluster import RecordingReporter


def _ago(seconds: float) -> str:
    return (datetime.now(UTC) - timedelta(seconds=seconds)).strftime(TIME_FORMAT)


def test_recheck_after_starts_soon_after_a_rollout_begins() -> None:
    assert recheck_after(_ago(0)) == RECHECK_MIN_SECONDS


def test_recheck_after_grows_with_the_age_of_the_rollout_up_to_a_bound() -> None:
    assert RECHECK_MIN_SECONDS < recheck_after(_ago(40)) < RECHECK_MAX_SECONDS
    assert recheck_after(_ago(3600)) == RECHECK_MAX_SECONDS


def test_recheck_after_an_unreadable_time_is_soon() -> None:
    assert recheck_after(None) == RECHECK_MIN_SECONDS
    assert recheck_after("yesterday") == RECHECK_MIN_SECONDS


def test_pods_refused_is_looked_at_again_as_its_end_wakes_nothing() -> None:
    """A Deployment's ReplicaFailure that goes (a scale-down within the quota creates no pod,
    and a status change of it wakes no one) is found by a recheck; other trouble, which a
    pod's change ends, waits for it."""
    report = RecordingReporter()
    ctx = Context(Key("memcached", "ns", "m"), cast(Any, None), cast(Any, None), report)

    def degraded(reason: str) -> dict[str, Any]:
        condition = {"type": "Degraded", "status": "True", "reason": reason, "message": "m"}
        return {"conditions": [condition]}

    cr = {"metadata": {"name": "m"}}
    assert settle(ctx, cr, degraded("PodsRefused")).requeue_after == RECHECK_MAX_SECONDS
    assert settle(ctx, cr, degraded("PodsUnschedulable")).requeue_after is None
    assert [reason for _, reason, _ in report.events] == ["PodsRefused", "PodsUnschedulable"]


def test_finish_runs_again_when_a_pods_grace_for_a_node_ends() -> None:
    """Nothing else would wake a CR whose pods' events are all told (recheck=False)."""
    report = RecordingReporter()
    ctx = Context(Key("memcached", "ns", "m"), cast(Any, None), cast(Any, None), report)
    progressing = {"type": "Progressing", "status": "True", "reason": "PodsStarting",
                   "message": "0/1 pod ready", "lastTransitionTime": _ago(0)}  # fmt: skip
    status = {"conditions": [progressing]}
    cr = {"metadata": {"name": "m", "namespace": "ns"}, "status": status}
    assert finish(ctx, MEMCACHED, cr, status, None, recheck=False).requeue_after is None
    assert finish(ctx, MEMCACHED, cr, status, None, recheck=False, due=7.0).requeue_after == 7.0
