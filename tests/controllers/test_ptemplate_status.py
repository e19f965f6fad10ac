from __future__ import annotations

from typing import Any

from controllers.conditions import find_condition
from controllers.ptemplate.status import compute_status
from tests.controllers.builders import pod
from tests.controllers.ptemplate_helpers import SPEC, daemonset, pending_pod, ptemplate

MODULE = {"metadata": {"name": "pt"}}


def _reasons(status: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}


def test_all_consumers_ready_is_available() -> None:
    pods = [pod(f"pt-consumer-{c}", image=SPEC["image"]) for c in "ba"]
    status = compute_status(
        ptemplate(), daemonset=daemonset(2, ready=2), module=MODULE, pods=pods, now="T"
    )
    assert status["nodes"] == ["pt-consumer-a", "pt-consumer-b"]
    assert (status["desiredNumberScheduled"], status["numberReady"]) == (2, 2)
    assert status["modulePresent"] is True
    assert status["moduleName"] == "pt"
    assert status["observedGeneration"] == 2
    assert _reasons(status) == {
        "Available": ("True", "PodsReady"),
        "Progressing": ("False", "RolloutComplete"),
        "Degraded": ("False", "AsExpected"),
    }


def test_pending_pods_of_an_old_template_are_not_told_as_updated() -> None:
    message = "0/2 nodes are available: 2 Insufficient acme.com/accel."
    pods = [pending_pod(f"pt-consumer-{c}", message) for c in "ab"]  # the same image
    status = compute_status(
        ptemplate(deviceCount=1),
        daemonset=daemonset(2, updated=0),
        module=MODULE,
        pods=pods,
        now="T",
    )
    progressing = find_condition(status["conditions"], "Progressing")
    assert progressing is not None
    assert (progressing["reason"], progressing["message"]) == (
        "RollingOut",
        "0/2 consumer pods updated",
    )


def test_a_daemonset_not_yet_counted_is_progressing_not_degraded() -> None:
    status = compute_status(ptemplate(), daemonset=daemonset(None), module=None, pods=[], now="T")
    assert status["modulePresent"] is False
    assert _reasons(status)["Progressing"] == ("True", "Creating")
    assert _reasons(status)["Degraded"] == ("False", "AsExpected")


def _changed(ds: dict[str, Any]) -> dict[str, Any]:
    """The DaemonSet after a spec change its controller has not observed yet."""
    return {**ds, "metadata": {**ds["metadata"], "generation": 2}}


def test_a_changed_daemonset_not_yet_counted_stays_available_and_rolls_out() -> None:
    """A healthy Ptemplate's spec change: its ready pods still serve, and the previous
    generation's desired count stands until the DaemonSet controller counts again."""
    pods = [pod(f"pt-consumer-{c}", image=SPEC["image"]) for c in "ab"]
    ds = _changed(daemonset(2, ready=2))
    status = compute_status(ptemplate(), daemonset=ds, module=MODULE, pods=pods, now="T")
    assert status["desiredNumberScheduled"] == 2
    assert _reasons(status) == {
        "Available": ("True", "PodsReady"),
        "Progressing": ("True", "RollingOut"),
        "Degraded": ("False", "AsExpected"),
    }
    progressing = find_condition(status["conditions"], "Progressing")
    assert progressing is not None and progressing["message"] == "0/2 consumer pods updated"


def test_a_node_selector_change_is_not_yet_told_as_matching_no_node() -> None:
    ds = _changed(daemonset(0))
    status = compute_status(ptemplate(), daemonset=ds, module=MODULE, pods=[], now="T")
    assert _reasons(status)["Degraded"] == ("False", "AsExpected")


def test_no_matching_node_is_degraded_naming_the_selector() -> None:
    status = compute_status(
        ptemplate(nodeSelector={"acme.com/accel": "present"}),
        daemonset=daemonset(0),
        module=MODULE,
        pods=[],
        now="T",
    )
    degraded = find_condition(status["conditions"], "Degraded")
    assert degraded is not None
    assert (degraded["status"], degraded["reason"]) == ("True", "NoMatchingNodes")
    assert degraded["message"] == (
        "No node matches the node selector acme.com/accel=present, or each one that does has "
        "a taint the consumer pods do not tolerate"
    )
    assert _reasons(status)["Available"] == ("False", "PodsNotReady")


def test_consumer_pods_left_running_by_a_taint_are_said_to_still_run() -> None:
    """A NoSchedule taint added under the consumers evicts none: the DaemonSet wants none
    and counts them misscheduled (kube-controller-manager v1.28 on the rig)."""
    ds = daemonset(0)
    ds["status"]["numberMisscheduled"] = 2
    status = compute_status(ptemplate(), daemonset=ds, module=MODULE, pods=[], now="T")
    assert find_condition(status["conditions"], "Degraded")["message"].endswith(
        "has a taint the consumer pods do not tolerate; 2 consumer pods placed before still "
        "run, and none would replace one that goes"
    )


def test_pods_pending_for_the_device_are_degraded_no_device_capacity() -> None:
    message = "0/3 nodes are available: 3 Insufficient acme.com/accel."
    pods = [pending_pod("pt-consumer-a", message)]
    status = compute_status(ptemplate(), daemonset=daemonset(3), module=MODULE, pods=pods, now="T")
    degraded = find_condition(status["conditions"], "Degraded")
    assert degraded is not None and degraded["reason"] == "NoDeviceCapacity"
    assert "2 free acme.com/accel" in degraded["message"]
    assert message in degraded["message"]


def test_a_problem_found_before_writing_wins() -> None:
    status = compute_status(
        ptemplate(),
        daemonset=None,
        module=None,
        pods=[],
        now="T",
        problem=("PullSecretMissing", "Secret pull does not exist"),
    )
    assert _reasons(status)["Degraded"] == ("True", "PullSecretMissing")


def test_an_image_that_cannot_be_pulled_is_degraded() -> None:
    pods = [pod("pt-consumer-a", image=SPEC["image"], ready=False, waiting="ImagePullBackOff")]
    status = compute_status(ptemplate(), daemonset=daemonset(1), module=MODULE, pods=pods, now="T")
    assert _reasons(status)["Degraded"] == ("True", "ImagePullFailed")


DS_REFUSED = (
    'Error creating: pods "pt-consumer-x7k2p" is forbidden: exceeded quota: q, '
    "requested: pods=1, used: pods=1, limited: pods=1"
)


def _refusing_daemonset(scheduled: int) -> dict[str, Any]:
    """A DaemonSet for two nodes whose controller has created `scheduled` pods."""
    ds = daemonset(2, ready=scheduled)
    ds.update(kind="DaemonSet", apiVersion="apps/v1")
    ds["metadata"].update(uid="ds-uid", namespace="shop")
    ds["status"]["currentNumberScheduled"] = scheduled
    return ds


def _failed_create(at: str) -> dict[str, Any]:
    """The Warning the DaemonSet controller posts for a pod the API server refused (v1.28:
    the pod control's "Error creating: ...")."""
    return {
        "kind": "Event",
        "type": "Warning",
        "reason": "FailedCreate",
        "message": DS_REFUSED,
        "involvedObject": {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "name": "pt-consumer",
            "uid": "ds-uid",
        },
        "lastTimestamp": at,
    }


def test_consumers_a_quota_refuses_are_degraded_saying_what_to_do() -> None:
    """A DaemonSet has no ReplicaFailure: its controller's FailedCreate Event tells."""
    running = [pod("pt-consumer-a", image=SPEC["image"])]
    status = compute_status(
        ptemplate(),
        daemonset=_refusing_daemonset(1),
        module=MODULE,
        pods=running,
        now="2026-11-29T12:00:00Z",
        events=[_failed_create("2026-11-29T11:59:30Z")],
    )
    degraded = find_condition(status["conditions"], "Degraded") or {}
    assert (degraded["status"], degraded["reason"]) == ("True", "PodsRefused")
    assert degraded["message"] == (
        f"DaemonSet pt-consumer cannot create its pods (FailedCreate): {DS_REFUSED}. "
        "Raise ResourceQuota q (kubectl -n shop describe resourcequota q) or lower what the "
        "pods request; the pods already there count against it."
    )


def test_a_consumer_refusal_is_over_once_every_node_has_its_pod() -> None:
    ready = [pod(f"pt-consumer-{c}", image=SPEC["image"]) for c in "ab"]
    status = compute_status(
        ptemplate(),
        daemonset=_refusing_daemonset(2),
        module=MODULE,
        pods=ready,
        now="2026-11-29T12:00:00Z",
        events=[_failed_create("2026-11-29T11:59:30Z")],
    )
    assert _reasons(status)["Degraded"] == ("False", "AsExpected")
