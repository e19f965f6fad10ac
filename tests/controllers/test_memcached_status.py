from __future__ import annotations

from controllers.conditions import find_condition
from controllers.memcached.status import compute_status
from tests.controllers.builders import memcached, pod

IMAGE = "memcached:1.4.36-alpine"


def _condition(status: dict, type_: str) -> tuple[str, str]:
    condition = find_condition(status["conditions"], type_)
    assert condition is not None
    return condition["status"], condition["reason"]


def test_status_nodes_are_the_sorted_names_of_the_live_pods() -> None:
    pods = [
        pod("m-c", image=IMAGE),
        pod("m-a", image=IMAGE),
        pod("m-b", image=IMAGE, deleting=True),
    ]
    status = compute_status(memcached(size=2), pods=pods, now="T")
    assert status["nodes"] == ["m-a", "m-c"]


def test_status_is_available_when_the_ready_pods_reach_the_size() -> None:
    pods = [pod(f"m-{i}", image=IMAGE) for i in range(3)]
    status = compute_status(memcached(size=3), pods=pods, now="T")
    assert status["readyReplicas"] == 3
    assert _condition(status, "Available") == ("True", "PodsReady")
    assert _condition(status, "Progressing") == ("False", "RolloutComplete")
    assert _condition(status, "Degraded") == ("False", "AsExpected")


def test_status_is_progressing_and_not_available_while_scaling_up() -> None:
    pods = [pod("m-0", image=IMAGE), pod("m-1", image=IMAGE, ready=False)]
    status = compute_status(memcached(size=5), pods=pods, now="T")
    assert status["readyReplicas"] == 1
    assert _condition(status, "Available") == ("False", "PodsNotReady")
    assert _condition(status, "Progressing") == ("True", "ScalingUp")


def test_status_is_progressing_while_pods_of_the_old_image_remain() -> None:
    pods = [pod("m-0", image="memcached:1.5"), pod("m-1", image=IMAGE)]
    status = compute_status(memcached(size=2, image=IMAGE), pods=pods, now="T")
    assert _condition(status, "Progressing") == ("True", "RollingOut")
    assert _condition(status, "Available") == ("True", "PodsReady")


def test_status_is_progressing_while_scaling_down() -> None:
    pods = [pod(f"m-{i}", image=IMAGE) for i in range(3)]
    status = compute_status(memcached(size=1), pods=pods, now="T")
    assert _condition(status, "Progressing") == ("True", "ScalingDown")


def test_a_scale_down_not_yet_begun_counts_no_more_ready_than_the_size() -> None:
    """As the rig reports it once the Deployment is scaled 5→4 and before the ReplicaSet
    marks a pod terminating: 5 live ready pods for size 4."""
    pods = [pod(f"m-{i}", image=IMAGE) for i in range(5)]
    status = compute_status(memcached(size=4), pods=pods, now="T")
    available = find_condition(status["conditions"], "Available")
    assert available is not None
    assert available["message"] == "4/4 pods ready (1 more pod being removed)"
    assert status["readyReplicas"] == 5  # the count itself stays what the pods say


def test_status_is_degraded_naming_the_image_when_it_cannot_be_pulled() -> None:
    bad = "memcached:does-not-exist"
    pods = [pod("m-0", image=bad, ready=False, waiting="ImagePullBackOff")]
    status = compute_status(memcached(size=1, image=bad), pods=pods, now="T")
    assert _condition(status, "Degraded") == ("True", "ImagePullFailed")
    degraded = find_condition(status["conditions"], "Degraded")
    assert degraded is not None and bad in degraded["message"]


# As kubelet v1.28 words a container whose Secret is missing (CreateContainerConfigError).
SECRET_MISSING = 'secret "db-pass" not found'


def test_status_is_degraded_with_the_kubelets_words_when_a_container_cannot_start() -> None:
    image = "memcached:1.6"
    stuck = pod("m-1", image=image, ready=False, waiting="CreateContainerConfigError")
    stuck["status"]["containerStatuses"][0]["state"]["waiting"]["message"] = SECRET_MISSING
    pods = [pod("m-0", image=image), stuck]
    status = compute_status(memcached(size=2, image=image), pods=pods, now="T")
    assert _condition(status, "Degraded") == ("True", "ContainerCannotStart")
    degraded = find_condition(status["conditions"], "Degraded")
    assert degraded is not None and degraded["message"] == (
        'Container main cannot start (CreateContainerConfigError: secret "db-pass" not found): '
        "1 pod waits, e.g. m-1"
    )
    # It waits for someone, not for time: not counted as starting.
    assert _condition(status, "Progressing") == ("False", "RolloutComplete")


def _unschedulable(name: str) -> dict:
    pending = pod(name, image=IMAGE, ready=False)
    pending["status"]["conditions"].append(
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "0/3 nodes are available: 3 Too many pods.",
        }
    )
    return pending


def test_status_is_degraded_when_no_node_can_take_its_pods() -> None:
    """Pending for good, as Ptemplate says it: not "Progressing" towards anything."""
    pods = [pod("m-0", image=IMAGE), _unschedulable("m-1"), _unschedulable("m-2")]
    status = compute_status(memcached(size=3), pods=pods, now="T")
    assert _condition(status, "Degraded") == ("True", "PodsUnschedulable")
    degraded = find_condition(status["conditions"], "Degraded")
    assert degraded is not None and degraded["message"] == (
        "2 pods cannot be scheduled, e.g. m-1: 0/3 nodes are available: 3 Too many pods."
    )
    assert _condition(status, "Progressing") == ("True", "PodsStarting")


def _refusing_deployment(requested: str = "pods=1") -> dict:
    failure = {
        "type": "ReplicaFailure",
        "status": "True",
        "reason": "FailedCreate",
        "message": f'pods "m-x" is forbidden: exceeded quota: q, requested: {requested}',
    }
    meta = {"name": "m", "namespace": "shop"}
    return {"kind": "Deployment", "metadata": meta, "status": {"conditions": [failure]}}


def test_status_is_degraded_when_the_api_server_refuses_its_pods() -> None:
    pods = [pod("m-0", image=IMAGE)]
    status = compute_status(
        memcached(size=3), pods=pods, now="T", deployment=_refusing_deployment()
    )
    assert _condition(status, "Degraded") == ("True", "PodsRefused")
    degraded = find_condition(status["conditions"], "Degraded")
    assert degraded is not None and degraded["message"] == (
        'Deployment m cannot create its pods (FailedCreate): pods "m-x" is forbidden: '
        "exceeded quota: q, requested: pods=1. Raise ResourceQuota q (kubectl -n shop "
        "describe resourcequota q) or lower the CR's spec.size; the pods already there "
        "count against it."
    )


def test_a_quota_on_memory_is_met_by_fewer_pods_or_less_memory_each() -> None:
    refusing = _refusing_deployment("requests.memory=64Mi, used: requests.memory=1Gi")
    status = compute_status(memcached(size=3), pods=[], now="T", deployment=refusing)
    degraded = find_condition(status["conditions"], "Degraded")
    assert degraded is not None and degraded["message"].endswith(
        "Raise ResourceQuota q (kubectl -n shop describe resourcequota q) or lower the CR's "
        "spec.size or spec.resources; the pods already there count against it."
    )


def test_a_deployment_without_replica_failure_leaves_the_status_as_expected() -> None:
    deployment = {"kind": "Deployment", "metadata": {"name": "m"}, "status": {}}
    status = compute_status(memcached(size=1), pods=[pod("m-0", image=IMAGE)], now="T",
                            deployment=deployment)  # fmt: skip
    assert _condition(status, "Degraded") == ("False", "AsExpected")


def test_messages_count_one_pod_in_the_singular() -> None:
    status = compute_status(memcached(size=1), pods=[pod("m-0", image=IMAGE)], now="T")
    progressing = find_condition(status["conditions"], "Progressing")
    available = find_condition(status["conditions"], "Available")
    assert progressing is not None and progressing["message"] == f"1 pod runs {IMAGE}"
    assert available is not None and available["message"] == "1/1 pod ready"
    bad = [pod("m-0", image="x:1", ready=False, waiting="ImagePullBackOff")]
    degraded = find_condition(
        compute_status(memcached(size=1, image="x:1"), pods=bad, now="T")["conditions"],
        "Degraded",
    )
    assert degraded is not None
    assert degraded["message"] == "Image x:1 cannot be pulled: 1 pod waits for it, e.g. m-0"


def test_status_is_degraded_with_the_reason_of_an_invalid_spec() -> None:
    status = compute_status(
        memcached(image="UPPER CASE:bad"),
        pods=[],
        now="T",
        problem=("InvalidSpec", "spec.image: bad"),
    )
    degraded = find_condition(status["conditions"], "Degraded")
    assert degraded is not None
    assert (degraded["status"], degraded["reason"], degraded["message"]) == (
        "True",
        "InvalidSpec",
        "spec.image: bad",
    )


def test_status_carries_the_selector_and_observed_generation_into_every_condition() -> None:
    status = compute_status(memcached("m", size=0), pods=[], now="T")
    assert status["selector"] == (
        "app.kubernetes.io/instance=m,app.kubernetes.io/managed-by=opsboard,"
        "app.kubernetes.io/name=memcached"
    )
    assert status["observedGeneration"] == 2
    assert {c["observedGeneration"] for c in status["conditions"]} == {2}
    assert _condition(status, "Available") == ("True", "PodsReady")


def test_recomputing_an_unchanged_status_gives_the_same_status() -> None:
    pods = [pod("m-0", image=IMAGE, ready=False)]
    cr = memcached(size=1)
    cr["status"] = compute_status(cr, pods=pods, now="T1")
    assert compute_status(cr, pods=pods, now="T2") == cr["status"]


def test_degraded_does_not_flap_between_err_image_pull_and_image_pull_back_off() -> None:
    bad = "memcached:does-not-exist"
    cr = memcached(size=1, image=bad)
    pulling = compute_status(
        cr, pods=[pod("m-0", image=bad, ready=False, waiting="ErrImagePull")], now="T"
    )
    backing_off = compute_status(
        cr, pods=[pod("m-0", image=bad, ready=False, waiting="ImagePullBackOff")], now="T"
    )
    assert pulling == backing_off
