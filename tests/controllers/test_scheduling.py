"""A pod that waits for a node is Degraded only past a grace (controllers.scheduling)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from controllers.conditions import TIME_FORMAT, find_condition
from controllers.graces import (
    UNREADY_SETTING,
    UNSCHEDULABLE_SETTING,
    Graces,
    graces_from,
)
from controllers.memcached.status import compute_status as memcached_status
from controllers.ptemplate.status import compute_status as ptemplate_status
from controllers.scheduling import UNSCHEDULABLE_GRACE_SECONDS, unscheduled
from controllers.unready import UNREADY_GRACE_SECONDS
from tests.controllers.builders import memcached, pod
from tests.controllers.ptemplate_helpers import daemonset, pending_pod, ptemplate

IMAGE = "memcached:1.4.36-alpine"
NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
FULL = "0/3 nodes are available: 3 Insufficient cpu."


def _at(seconds_before_now: float) -> str:
    return (NOW - timedelta(seconds=seconds_before_now)).strftime(TIME_FORMAT)


def _waiting(name: str, *, for_s: float, message: str = FULL) -> dict[str, Any]:
    """A Pending pod the scheduler found no node for `for_s` seconds before NOW."""
    pending = pod(name, image=IMAGE, ready=False)
    pending["status"]["conditions"].append(
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": message,
            "lastTransitionTime": _at(for_s),
        }
    )
    return pending


def _condition(status: dict[str, Any], type_: str) -> dict[str, Any]:
    condition = find_condition(status["conditions"], type_)
    assert condition is not None
    return condition


def test_a_pod_waiting_for_a_node_within_the_grace_is_progressing_not_degraded() -> None:
    """The surge pod of a rolling update on full nodes: waiting, not broken."""
    pods = [pod("m-a", image=IMAGE), _waiting("m-b", for_s=5)]
    status = memcached_status(memcached(size=2), pods=pods, now=_at(0))
    assert _condition(status, "Degraded")["status"] == "False"
    progressing = _condition(status, "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("True", "PodsStarting")
    assert progressing["message"] == (
        f"1/2 pods ready; 1 pod waits to be scheduled, e.g. m-b: {FULL}"
    )


def test_a_pod_waiting_for_a_node_past_the_grace_is_degraded() -> None:
    pods = [pod("m-a", image=IMAGE), _waiting("m-b", for_s=UNSCHEDULABLE_GRACE_SECONDS + 1)]
    status = memcached_status(memcached(size=2), pods=pods, now=_at(0))
    degraded = _condition(status, "Degraded")
    assert (degraded["status"], degraded["reason"]) == ("True", "PodsUnschedulable")
    assert degraded["message"] == f"1 pod cannot be scheduled, e.g. m-b: {FULL}"
    assert _condition(status, "Progressing")["message"] == "1/2 pods ready"


def test_the_grace_is_the_one_given() -> None:
    pods = [_waiting("m-a", for_s=5)]
    status = memcached_status(
        memcached(size=1), pods=pods, now=_at(0), graces=Graces(unschedulable=3)
    )
    assert _condition(status, "Degraded")["reason"] == "PodsUnschedulable"


def test_a_pod_waiting_since_an_unknown_time_is_degraded_at_once() -> None:
    """No lastTransitionTime to count from: the scheduler's verdict is taken as it is."""
    pending = _waiting("m-a", for_s=0)
    del pending["status"]["conditions"][-1]["lastTransitionTime"]
    status = memcached_status(memcached(size=1), pods=[pending], now=_at(0))
    assert _condition(status, "Degraded")["reason"] == "PodsUnschedulable"


def test_unscheduled_says_when_the_first_grace_ends() -> None:
    """A second past it: the times have whole seconds."""
    pods = [_waiting("a", for_s=10), _waiting("b", for_s=25), _waiting("c", for_s=40)]
    found = unscheduled(pods, now=_at(0), grace=30)
    assert [p["metadata"]["name"] for p, _ in found.stuck] == ["c"]
    assert [p["metadata"]["name"] for p, _ in found.waiting] == ["a", "b"]
    assert found.recheck == 6.0
    assert unscheduled([pod("d", image=IMAGE)], now=_at(0), grace=30).recheck is None


def test_the_graces_come_from_the_settings_or_the_defaults() -> None:
    assert graces_from({}) == Graces(UNSCHEDULABLE_GRACE_SECONDS, UNREADY_GRACE_SECONDS)
    given = graces_from({UNSCHEDULABLE_SETTING: 120, UNREADY_SETTING: "5"})
    assert given == Graces(unschedulable=120.0, unready=5.0)


def test_ptemplate_consumers_waiting_for_the_device_within_the_grace_are_progressing() -> None:
    """The same rule for every operator: a device plugin starting is not yet a lack of devices."""
    message = "0/3 nodes are available: 3 Insufficient acme.com/accel."
    waiting = pending_pod("pt-consumer-a", message)
    waiting["status"]["conditions"][-1]["lastTransitionTime"] = _at(5)
    status = ptemplate_status(
        ptemplate(), daemonset=daemonset(1), module={}, pods=[waiting], now=_at(0)
    )
    assert _condition(status, "Degraded")["status"] == "False"
    progressing = _condition(status, "Progressing")
    assert progressing["status"] == "True"
    assert progressing["message"].endswith(
        f"; 1 consumer pod waits to be scheduled, e.g. pt-consumer-a: {message}"
    )

    later = ptemplate_status(
        ptemplate(), daemonset=daemonset(1), module={}, pods=[waiting], now=_at(-30)
    )
    assert _condition(later, "Degraded")["reason"] == "NoDeviceCapacity"
