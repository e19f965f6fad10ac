"""A LimitRange's bounds: the LimitRanger admission refuses a pod whose containers (or, for a
Pod item, all of them together) ask for more than its `max`, less than its `min`, or a limit
too far above the request, and a claim that asks for more or less storage than a
PersistentVolumeClaim item allows, at its creation or as it grows, in kube-apiserver
v1.28's words (checked on the rig: every message below is the real one)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client

from tests.kubesim.cluster.helpers import (
    claim,
    create_bound_claim,
    create_limit_range,
    create_limits,
    grow_claim,
    pod,
)


def _sized(name: str, **resources: dict[str, str]) -> dict[str, Any]:
    return pod(name, containers=[
        {"name": "main", "image": "registry.k8s.io/pause:3.9", "resources": resources}
    ])  # fmt: skip


def _refused(core: client.CoreV1Api, namespace: str, body: dict[str, Any]) -> str:
    return _forbidden(lambda: core.create_namespaced_pod(namespace, body))


def _forbidden(call: Any) -> str:
    with pytest.raises(client.ApiException) as refused:
        call()
    assert refused.value.status == 403, refused.value.body
    message: str = json.loads(refused.value.body)["message"]
    return message


def test_a_limit_above_the_max_is_refused(core: client.CoreV1Api, namespace: str) -> None:
    create_limit_range(core, namespace, "bounds", max={"memory": "1Gi"})
    big = _sized("big", limits={"memory": "2048Mi"}, requests={"memory": "1Gi"})
    assert _refused(core, namespace, big) == (
        'pods "big" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi'
    )
    # Within it, the pod is made; one stating nothing gets the max as its limit and request.
    core.create_namespaced_pod(namespace, _sized("fits", limits={"memory": "1Gi"}))
    bare = core.create_namespaced_pod(namespace, pod("bare")).spec.containers[0].resources
    assert (bare.limits, bare.requests) == ({"memory": "1Gi"}, {"memory": "1Gi"})


def test_every_bound_broken_is_said_at_once(core: client.CoreV1Api, namespace: str) -> None:
    create_limit_range(
        core, namespace, "bounds", min={"memory": "10Mi"}, maxLimitRequestRatio={"memory": "2"}
    )
    small = _sized("small", limits={"memory": "20Mi"}, requests={"memory": "5Mi"})
    assert _refused(core, namespace, small) == (
        'pods "small" is forbidden: [minimum memory usage per Container is 10Mi, but request '
        "is 5Mi, memory max limit to request ratio per Container is 2, but provided ratio is "
        "4.000000]"
    )


def test_a_ratio_bound_wants_both_a_request_and_a_limit(
    core: client.CoreV1Api, namespace: str
) -> None:
    create_limit_range(core, namespace, "bounds", maxLimitRequestRatio={"cpu": "4"})
    assert _refused(
        core, namespace, _sized("wide", limits={"cpu": "1"}, requests={"cpu": "100m"})
    ) == (
        'pods "wide" is forbidden: cpu max limit to request ratio per Container is 4, but '
        "provided ratio is 10.000000"
    )
    assert _refused(core, namespace, _sized("open", requests={"cpu": "100m"})) == (
        'pods "open" is forbidden: cpu max limit to request ratio per Container is 4, but no '
        "limit is specified or limit is 0"
    )


def _containers(name: str, *memory: str, init: str | None = None) -> dict[str, Any]:
    """A pod of one container per memory limit given (and an init container of `init`)."""

    def container(n: str, limit: str) -> dict[str, Any]:
        return {"name": n, "image": "registry.k8s.io/pause:3.9",
                "resources": {"limits": {"memory": limit}}}  # fmt: skip

    spec: dict[str, Any] = {"containers": [container(f"c{i}", m) for i, m in enumerate(memory)]}
    if init is not None:
        spec["initContainers"] = [container("setup", init)]
    return pod(name, **spec)


def test_a_pod_item_bounds_the_sum_of_the_containers(
    core: client.CoreV1Api, namespace: str
) -> None:
    """Each container within what the item allows one pod; together past it."""
    create_limits(core, namespace, "bounds", {"type": "Pod", "max": {"memory": "1Gi"}})
    core.create_namespaced_pod(namespace, _containers("fits", "512Mi", "512Mi"))
    assert _refused(core, namespace, _containers("two", "768Mi", "768Mi")) == (
        'pods "two" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1536Mi'
    )
    # An init container runs alone: it counts when larger than the containers' sum.
    assert _refused(core, namespace, _containers("init", "256Mi", init="2Gi")) == (
        'pods "init" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 2Gi'
    )
    # A Pod item gives no defaults: a pod that states nothing has no limit to hold.
    assert _refused(core, namespace, pod("bare")) == (
        'pods "bare" is forbidden: maximum memory usage per Pod is 1Gi.  No limit is specified'
    )


def test_a_claim_is_held_to_the_storage_bounds_at_creation_and_as_it_grows(
    core: client.CoreV1Api, namespace: str
) -> None:
    item = {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "2Gi"}}
    create_limits(core, namespace, "storage", item)
    create = core.create_namespaced_persistent_volume_claim
    assert _forbidden(lambda: create(namespace, claim("data-x", "5Gi"))) == (
        'persistentvolumeclaims "data-x" is forbidden: maximum storage usage per '
        "PersistentVolumeClaim is 2Gi, but request is 5Gi"
    )
    assert _forbidden(lambda: create(namespace, claim("small", "100Mi"))) == (
        'persistentvolumeclaims "small" is forbidden: minimum storage usage per '
        "PersistentVolumeClaim is 1Gi, but request is 100Mi"
    )
    create_bound_claim(core, namespace, "data", "1Gi")
    assert _forbidden(lambda: grow_claim(core, namespace, "data", "3Gi")) == (
        'persistentvolumeclaims "data" is forbidden: maximum storage usage per '
        "PersistentVolumeClaim is 2Gi, but request is 3Gi"
    )
    grown = grow_claim(core, namespace, "data", "2Gi")
    assert grown.spec.resources.requests == {"storage": "2Gi"}


def test_the_first_limitrange_that_refuses_says_why_alone(
    core: client.CoreV1Api, namespace: str
) -> None:
    """Each LimitRange is judged in turn, and the first one broken refuses; which comes
    first is the API server's cache's order."""
    for name, ceiling in (("a", "2Gi"), ("b", "3Gi")):
        create_limits(
            core, namespace, name, {"type": "PersistentVolumeClaim", "max": {"storage": ceiling}}
        )
    refused = _forbidden(
        lambda: core.create_namespaced_persistent_volume_claim(namespace, claim("big", "5Gi"))
    )
    said = 'persistentvolumeclaims "big" is forbidden: maximum storage usage per '
    assert refused in {
        f"{said}PersistentVolumeClaim is {ceiling}, but request is 5Gi"
        for ceiling in ("2Gi", "3Gi")
    }
