"""A LimitRange's bounds: the LimitRanger admission refuses a pod whose containers ask for
more than its `max`, less than its `min`, or a limit too far above the request, in
kube-apiserver v1.28's words (checked on the rig: every message below is the real one)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client

from tests.kubesim.cluster.helpers import create_limit_range, pod


def _sized(name: str, **resources: dict[str, str]) -> dict[str, Any]:
    return pod(name, containers=[
        {"name": "main", "image": "registry.k8s.io/pause:3.9", "resources": resources}
    ])  # fmt: skip


def _refused(core: client.CoreV1Api, namespace: str, body: dict[str, Any]) -> str:
    with pytest.raises(client.ApiException) as refused:
        core.create_namespaced_pod(namespace, body)
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
