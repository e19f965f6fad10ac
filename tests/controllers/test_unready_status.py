"""Pods that are not ready and not starting either make the CR Degraded, not Progressing:
those on a node that stopped reporting (NodeLost), those whose readiness probe fails past
its grace (ReadinessFailing), and those stuck on their image or in a crash loop
(ImagePullFailed, PodsCrashing). One rule, controllers.unready, for every operator."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from controllers.bookstore.status import compute_status as bookstore_status
from controllers.conditions import TIME_FORMAT, find_condition
from controllers.graces import Graces, grace_ends
from controllers.memcached.status import compute_status as memcached_status
from controllers.pods import CRASH_SETTLE_SECONDS
from controllers.ptemplate.status import compute_status as ptemplate_status
from controllers.unready import UNREADY_GRACE_SECONDS
from tests.controllers.builders import bookstore, memcached, pod
from tests.controllers.ptemplate_helpers import SPEC, daemonset, ptemplate

IMAGE = "memcached:1.4.36-alpine"
NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
AT = NOW.strftime(TIME_FORMAT)


def _at(seconds_before_now: float) -> str:
    return (NOW - timedelta(seconds=seconds_before_now)).strftime(TIME_FORMAT)


def _owned(body: dict[str, Any], kind: str, name: str) -> dict[str, Any]:
    body["metadata"]["ownerReferences"] = [
        {"kind": kind, "name": name, "uid": f"uid-{name}", "controller": True}
    ]
    return body


def _lost(name: str, *, node: str = "node-2", image: str = IMAGE,
          owner: tuple[str, str] = ("ReplicaSet", "memcached-sample-5d8"),
          tolerate: int | None = 300) -> dict[str, Any]:  # fmt: skip
    """As v1.28.7 leaves a pod whose node stopped reporting: Running, Ready False with no
    reason (MarkPodsNotReady), its containers still ready (the kubelet's last word)."""
    lost = pod(name, image=image)
    lost["status"]["conditions"] = [
        {"type": "Ready", "status": "False", "lastTransitionTime": _at(60)}
    ]
    lost["status"]["containerStatuses"] = [
        {"name": "main", "ready": True, "started": True, "state": {"running": {}}}
    ]
    # Both as the DefaultTolerationSeconds admission plugin adds them.
    tolerations: list[dict[str, Any]] = [
        {"key": f"node.kubernetes.io/{key}", "operator": "Exists", "effect": "NoExecute"}
        for key in ("not-ready", "unreachable")
    ]
    if tolerate is not None:
        for toleration in tolerations:
            toleration["tolerationSeconds"] = tolerate
    lost["spec"] |= {"nodeName": node, "tolerations": tolerations}
    return _owned(lost, *owner)


def _unready(name: str, *, for_s: float, image: str = IMAGE,
             probe: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """As a kubelet reports a pod whose readiness probe fails, `for_s` seconds before NOW:
    running and started, not ready (ContainersNotReady)."""
    failing = pod(name, image=image)
    failing["status"]["conditions"] = [
        {"type": "Ready", "status": "False", "reason": "ContainersNotReady",
         "lastTransitionTime": _at(for_s)},
    ]  # fmt: skip
    failing["status"]["containerStatuses"] = [
        {"name": "main", "ready": False, "started": True,
         "state": {"running": {"startedAt": _at(3600)}}},
    ]  # fmt: skip
    if probe:
        failing["spec"]["containers"][0]["readinessProbe"] = probe
    return failing


def _conditions(status: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}


def _message(status: dict[str, Any], type_: str) -> str:
    condition = find_condition(status["conditions"], type_)
    assert condition is not None
    return str(condition["message"])


DEPLOYMENT = {"kind": "Deployment", "metadata": {"name": "memcached-sample"}, "status": {}}


def test_a_pod_on_a_node_that_stopped_reporting_is_degraded_not_starting() -> None:
    pods = [pod("m-a", image=IMAGE), _lost("m-b"), pod("m-c", image=IMAGE)]
    status = memcached_status(memcached(size=3, image=IMAGE), pods=pods, now=AT,
                              deployment=DEPLOYMENT)  # fmt: skip
    assert _conditions(status) == {
        "Available": ("False", "PodsNotReady"),
        "Progressing": ("False", "RolloutComplete"),
        "Degraded": ("True", "NodeLost"),
    }
    assert _message(status, "Degraded") == (
        "1 pod not ready on node node-2, whose Ready condition is not True (its kubelet "
        "stopped reporting, or reports the node unwell), e.g. m-b: Kubernetes evicts it after "
        "its toleration of a node unreachable or not ready (300 s), and Deployment "
        "memcached-sample starts a replacement on another node. Check the node: kubectl "
        "describe node node-2"
    )
    assert _message(status, "Available") == "2/3 pods ready"


def test_a_lost_pod_that_tolerates_the_two_node_states_differently_is_told_both() -> None:
    """The status does not know whether the kubelet is silent or says the node is unwell:
    with tolerations that differ, it tells each."""
    lost = _lost("m-b")
    lost["spec"]["tolerations"][0]["tolerationSeconds"] = 600  # not-ready
    status = memcached_status(memcached(size=1, image=IMAGE), pods=[lost], now=AT,
                              deployment=DEPLOYMENT)  # fmt: skip
    assert (
        "e.g. m-b: Kubernetes evicts it after its toleration of the node's state (300 s if "
        "unreachable, 600 s if not ready), and Deployment memcached-sample"
    ) in _message(status, "Degraded")


def test_a_pod_whose_readiness_probe_fails_past_the_grace_is_degraded_not_starting() -> None:
    probe = {"httpGet": {"path": "/healthz", "port": 11211}}
    pods = [pod("m-a", image=IMAGE),
            _unready("m-b", for_s=UNREADY_GRACE_SECONDS + 5, probe=probe)]  # fmt: skip
    status = memcached_status(memcached(size=2, image=IMAGE), pods=pods, now=AT)
    assert _conditions(status) == {
        "Available": ("False", "PodsNotReady"),
        "Progressing": ("False", "RolloutComplete"),
        "Degraded": ("True", "ReadinessFailing"),
    }
    assert _message(status, "Degraded") == (
        "Container main fails its readiness probe (GET :11211/healthz): 1 pod running but not "
        "ready, e.g. m-b. Its Events say why: kubectl -n shop describe pod m-b"
    )


def test_a_pod_unready_within_the_grace_is_still_starting() -> None:
    pods = [pod("m-a", image=IMAGE), _unready("m-b", for_s=UNREADY_GRACE_SECONDS - 10)]
    status = memcached_status(memcached(size=2, image=IMAGE), pods=pods, now=AT)
    assert _conditions(status) == {
        "Available": ("False", "PodsNotReady"),
        "Progressing": ("True", "PodsStarting"),
        "Degraded": ("False", "AsExpected"),
    }
    # No event tells when the grace ends: the reconcile runs again by then.
    assert grace_ends(pods, now=AT, graces=Graces()) == 11.0


def test_the_unready_grace_is_the_one_given() -> None:
    """Above the probe's own window (here 6 s), which it never goes below."""
    fast = {"periodSeconds": 2, "failureThreshold": 3}
    pods = [pod("m-a", image=IMAGE), _unready("m-b", for_s=20, probe=fast)]
    cr = memcached(size=2, image=IMAGE)
    status = memcached_status(cr, pods=pods, now=AT, graces=Graces(unready=15))
    assert _conditions(status)["Degraded"] == ("True", "ReadinessFailing")
    status = memcached_status(cr, pods=pods, now=AT, graces=Graces(unready=60))
    assert _conditions(status)["Degraded"] == ("False", "AsExpected")
    assert grace_ends(pods, now=AT, graces=Graces(unready=60)) == 41.0
    status = memcached_status(cr, pods=pods, now=AT, graces=Graces(unready=0))
    assert _conditions(status)["Degraded"] == ("True", "ReadinessFailing")
    slow = [pod("m-a", image=IMAGE), _unready("m-b", for_s=20)]  # the default probe: 30 s
    status = memcached_status(cr, pods=slow, now=AT, graces=Graces(unready=0))
    assert _conditions(status)["Degraded"] == ("False", "AsExpected")


def test_pods_still_starting_keep_the_cr_progressing_beside_a_failing_one() -> None:
    starting = pod("m-c", image=IMAGE, ready=False)
    pods = [pod("m-a", image=IMAGE), _unready("m-b", for_s=600), starting]
    status = memcached_status(memcached(size=3, image=IMAGE), pods=pods, now=AT)
    assert _conditions(status)["Progressing"] == ("True", "PodsStarting")
    # Of the two not ready, the one still starting: Degraded tells of the other.
    assert _message(status, "Progressing") == "1/3 pods ready, 1 starting"
    assert _conditions(status)["Degraded"] == ("True", "ReadinessFailing")
    # With none failing, all the unready pods are starting: nothing to add.
    status = memcached_status(memcached(size=2, image=IMAGE), pods=[pods[0], starting], now=AT)
    assert _message(status, "Progressing") == "1/2 pods ready"


def test_a_consumer_pod_still_starting_beside_a_failing_one_is_counted() -> None:
    pods = [pod("pt-consumer-a", image=SPEC["image"]),
            _unready("pt-consumer-b", image=SPEC["image"], for_s=600),
            pod("pt-consumer-c", image=SPEC["image"], ready=False)]  # fmt: skip
    status = ptemplate_status(
        ptemplate(), daemonset=daemonset(3, ready=1), module={}, pods=pods, now=AT
    )
    assert _conditions(status)["Progressing"] == ("True", "PodsStarting")
    assert _message(status, "Progressing") == "1/3 consumer pods ready, 1 starting"
    assert _conditions(status)["Degraded"] == ("True", "ReadinessFailing")


def test_a_crash_loops_last_exit_is_said_where_it_says_more_than_error() -> None:
    """OOMKilled is a memory limit, not a bug in the app: `kubectl get` shows which."""
    oom = pod("m-a", image=IMAGE, ready=False, waiting="CrashLoopBackOff")
    oom["status"]["containerStatuses"][0]["lastState"] = {
        "terminated": {"reason": "OOMKilled", "exitCode": 137}
    }
    status = memcached_status(memcached(size=1, image=IMAGE), pods=[oom], now=AT)
    assert _message(status, "Degraded") == (
        "Container main keeps crashing (last exit: OOMKilled, code 137): 1 pod in "
        "CrashLoopBackOff, e.g. m-a"
    )
    oom["status"]["containerStatuses"][0]["lastState"]["terminated"]["reason"] = "Error"
    status = memcached_status(memcached(size=1, image=IMAGE), pods=[oom], now=AT)
    assert _message(status, "Degraded") == (
        "Container main keeps crashing: 1 pod in CrashLoopBackOff, e.g. m-a"
    )


def test_pods_stuck_on_their_image_or_crashing_are_not_starting() -> None:
    """A crash loop or an image that cannot be pulled does not end by itself: the CR is
    Degraded, and no longer Progressing once no other pod is on its way."""
    crashing = pod("m-b", image=IMAGE, ready=False, waiting="CrashLoopBackOff")
    pulling = pod("m-c", image=IMAGE, ready=False, waiting="ImagePullBackOff")
    starting = pod("m-d", image=IMAGE, ready=False)
    ready = pod("m-a", image=IMAGE)
    status = memcached_status(
        memcached(size=4, image=IMAGE), pods=[ready, crashing, pulling, starting], now=AT
    )
    assert _conditions(status)["Progressing"] == ("True", "PodsStarting")
    assert _message(status, "Progressing") == "1/4 pods ready, 1 starting"
    assert _conditions(status)["Degraded"] == ("True", "ImagePullFailed")
    status = memcached_status(
        memcached(size=3, image=IMAGE), pods=[ready, crashing, pulling], now=AT
    )
    assert _conditions(status)["Progressing"] == ("False", "RolloutComplete")
    assert _conditions(status)["Available"] == ("False", "PodsNotReady")
    status = memcached_status(memcached(size=2, image=IMAGE), pods=[ready, crashing], now=AT)
    assert _conditions(status)["Progressing"] == ("False", "RolloutComplete")
    assert _conditions(status)["Degraded"] == ("True", "PodsCrashing")


def test_a_consumer_pod_in_a_crash_loop_is_not_starting() -> None:
    pods = [pod("pt-consumer-a", image=SPEC["image"]),
            pod("pt-consumer-b", image=SPEC["image"], ready=False, waiting="CrashLoopBackOff"),
            pod("pt-consumer-c", image=SPEC["image"], ready=False)]  # fmt: skip
    status = ptemplate_status(
        ptemplate(), daemonset=daemonset(3, ready=1), module={}, pods=pods, now=AT
    )
    assert _conditions(status)["Progressing"] == ("True", "PodsStarting")
    assert _message(status, "Progressing") == "1/3 consumer pods ready, 1 starting"
    assert _conditions(status)["Degraded"] == ("True", "PodsCrashing")
    status = ptemplate_status(
        ptemplate(), daemonset=daemonset(2, ready=1), module={}, pods=pods[:2], now=AT
    )
    assert _conditions(status)["Progressing"][0] == "False"


def _back_from_a_crash(name: str, *, restarts: int, running_for: float,
                       ready: bool = True) -> dict[str, Any]:  # fmt: skip
    """A container restarted `restarts` times, running again for `running_for` seconds."""
    back = pod(name, image=IMAGE, ready=ready)
    back["status"]["containerStatuses"] = [
        {"name": "main", "ready": ready, "started": True, "restartCount": restarts,
         "state": {"running": {"startedAt": _at(running_for)}},
         "lastState": {"terminated": {"reason": "Error", "exitCode": 1}}},
    ]  # fmt: skip
    return back


def test_a_crash_loops_container_running_between_back_offs_is_still_crashing() -> None:
    """Restarted twice or more and running again for less than CRASH_SETTLE_SECONDS: still
    in the loop (Degraded stays, no flap at each restart), and the status is told again
    when that window ends, which no event tells."""
    cr = memcached(size=1, image=IMAGE)
    for ready in (True, False):
        back = _back_from_a_crash("m-a", restarts=3, running_for=5, ready=ready)
        status = memcached_status(cr, pods=[back], now=AT)
        assert _conditions(status)["Degraded"] == ("True", "PodsCrashing")
        assert _conditions(status)["Progressing"][0] == "False"
        assert grace_ends([back], now=AT, graces=Graces()) == CRASH_SETTLE_SECONDS - 5 + 1
    # Up long enough: out of the loop.
    settled = _back_from_a_crash("m-a", restarts=3, running_for=CRASH_SETTLE_SECONDS + 1)
    status = memcached_status(cr, pods=[settled], now=AT)
    assert _conditions(status)["Degraded"] == ("False", "AsExpected")
    assert grace_ends([settled], now=AT, graces=Graces()) is None
    # One restart (a node's, a liveness probe's) is no loop.
    once = _back_from_a_crash("m-a", restarts=1, running_for=5)
    assert _conditions(memcached_status(cr, pods=[once], now=AT))["Degraded"][0] == "False"
    # Exited again, before its back-off shows: still crashing.
    exited = _back_from_a_crash("m-a", restarts=2, running_for=5, ready=False)
    exited["status"]["containerStatuses"][0]["state"] = {"terminated": {"exitCode": 1}}
    status = memcached_status(cr, pods=[exited], now=AT)
    assert _conditions(status)["Degraded"] == ("True", "PodsCrashing")


def test_pods_that_cannot_start_come_before_those_that_run_unready() -> None:
    crashing = pod("m-c", image=IMAGE, ready=False, waiting="CrashLoopBackOff")
    pods = [_lost("m-a"), _unready("m-b", for_s=600), crashing]
    status = memcached_status(memcached(size=3, image=IMAGE), pods=pods, now=AT)
    assert _conditions(status)["Degraded"] == ("True", "PodsCrashing")
    # And a node that went comes before a probe that fails.
    status = memcached_status(memcached(size=2, image=IMAGE), pods=pods[:2], now=AT)
    assert _conditions(status)["Degraded"] == ("True", "NodeLost")


def test_the_soonest_grace_to_end_is_due_whichever_it_is() -> None:
    waiting = pod("m-a", image=IMAGE, ready=False)
    waiting["status"]["conditions"].append(
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
         "message": "0/3 nodes are available", "lastTransitionTime": _at(25)}
    )  # fmt: skip
    unready = _unready("m-b", for_s=10)
    assert grace_ends([waiting, unready], now=AT, graces=Graces()) == 6.0
    assert grace_ends([waiting, unready], now=AT, graces=Graces(unschedulable=60)) == 21.0
    assert grace_ends([pod("m-c", image=IMAGE), _lost("m-d")], now=AT, graces=Graces()) is None


def test_a_db_pod_evicted_from_a_lost_node_holds_its_place_and_is_degraded() -> None:
    """A StatefulSet replaces its pod only once it is gone, which its node must confirm:
    the CR is not "scaling up" towards a pod that no one creates."""
    spec = {"bookApp": {"replicas": 1, "image": "shop/app:1"}, "bookDB": {"replicas": 1}}
    db = _lost("s-db-0", image="mongo:7.0", owner=("StatefulSet", "s-db"))
    db["metadata"]["deletionTimestamp"] = _at(10)
    status = bookstore_status(
        bookstore("s", **spec), app_pods=[pod("s-app-1", image="shop/app:1")], db_pods=[db],
        app_service=None, claims=[], now=AT,
    )  # fmt: skip
    assert _conditions(status) == {
        "Available": ("False", "PodsNotReady"),
        "Progressing": ("False", "RolloutComplete"),
        "Degraded": ("True", "NodeLost"),
    }
    assert _message(status, "Degraded") == (
        "DB: 1 pod not ready on node node-2, whose Ready condition is not True (its kubelet "
        "stopped reporting, or reports the node unwell), e.g. s-db-0: Kubernetes has evicted it, but no kubelet is there to "
        "stop it; StatefulSet s-db does not replace s-db-0 until it is gone: until node node-2 "
        "is back or it is deleted by force. Check the node: kubectl describe node node-2"
    )


def test_a_consumer_pod_on_a_lost_node_stays_there_and_is_degraded() -> None:
    pods = [
        pod("pt-consumer-a", image=SPEC["image"]),
        _lost("pt-consumer-b", image=SPEC["image"], owner=("DaemonSet", "pt-consumer"),
              tolerate=None),
    ]  # fmt: skip
    status = ptemplate_status(
        ptemplate(), daemonset=daemonset(2, ready=1), module={}, pods=pods, now=AT
    )
    assert _conditions(status) == {
        "Available": ("False", "PodsNotReady"),
        "Progressing": ("False", "RolloutComplete"),
        "Degraded": ("True", "NodeLost"),
    }
    assert _message(status, "Degraded") == (
        "1 consumer pod not ready on node node-2, whose Ready condition is not True (its "
        "kubelet stopped reporting, or reports the node unwell), e.g. pt-consumer-b: DaemonSet pt-consumer's pod stays there "
        "until node node-2 is back: no other node runs it in its place. Check the node: "
        "kubectl describe node node-2"
    )


def test_a_consumer_pod_whose_readiness_probe_fails_is_degraded() -> None:
    pods = [pod("pt-consumer-a", image=SPEC["image"]),
            _unready("pt-consumer-b", image=SPEC["image"], for_s=600)]  # fmt: skip
    status = ptemplate_status(
        ptemplate(), daemonset=daemonset(2, ready=1), module={}, pods=pods, now=AT
    )
    assert _conditions(status)["Progressing"] == ("False", "RolloutComplete")
    assert _conditions(status)["Degraded"] == ("True", "ReadinessFailing")
    assert "1 consumer pod running but not ready, e.g. pt-consumer-b" in _message(
        status, "Degraded"
    )


def test_the_message_names_the_same_pod_whatever_order_the_cache_lists_them_in() -> None:
    """A message that changed with the list's order would rewrite the status each run."""
    pods = [_lost("m-b"), _lost("m-a")]
    cr = memcached(size=2, image=IMAGE)
    messages = {
        _message(memcached_status(cr, pods=order, now=AT), "Degraded")
        for order in (pods, pods[::-1])
    }
    assert len(messages) == 1 and "e.g. m-a:" in messages.pop()


def test_a_slow_probe_keeps_its_pod_starting_for_its_own_window() -> None:
    """A probe that starts late (initialDelaySeconds) is given its own window, not 30 s."""
    slow = {"httpGet": {"path": "/", "port": 80}, "initialDelaySeconds": 60, "periodSeconds": 5}
    pods = [pod("m-a", image=IMAGE), _unready("m-b", for_s=50, probe=slow)]
    status = memcached_status(memcached(size=2, image=IMAGE), pods=pods, now=AT)
    assert _conditions(status)["Progressing"] == ("True", "PodsStarting")
    assert _conditions(status)["Degraded"] == ("False", "AsExpected")
    # 60 s + 3 failures of 5 s after it began to wait, 50 s ago: look again in 26 s.
    assert grace_ends(pods, now=AT, graces=Graces()) == 26.0

    late = [pod("m-a", image=IMAGE), _unready("m-b", for_s=80, probe=slow)]
    status = memcached_status(memcached(size=2, image=IMAGE), pods=late, now=AT)
    assert _conditions(status)["Degraded"] == ("True", "ReadinessFailing")
