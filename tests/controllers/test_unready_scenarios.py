"""Pods that are not ready and not starting either, end to end (the Memcached operator run
for real): the CR reads Degraded, not Progressing, as read through the API.

kubesim only: its node controller takes a node's kubelet away on request and its kubelet
fails a readiness probe on request; the rig's fake kubelet can do neither.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from controllers.base import POD
from controllers.conditions import condition_of
from controllers.fields import deep_get
from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED, labels_for
from controllers.unready import UNREADY_GRACE_SECONDS
from tests.controllers.cluster import list_objects
from tests.diagnosis.memcached_run import create_memcached
from tests.kubesim.cluster.helpers import make_ready, make_unready, set_node_ready
from tests.support.waiting import wait_for

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.kubesim_only,
    pytest.mark.usefixtures("running_engine"),
]


def _conditions(kube: ApiKube, namespace: str, name: str) -> dict[str, dict[str, Any]]:
    cr = kube.get(MEMCACHED, namespace, name)
    return {t: condition_of(cr, t) for t in ("Available", "Progressing", "Degraded")}


def _available(kube: ApiKube, namespace: str, name: str) -> bool:
    now = _conditions(kube, namespace, name)
    return now["Available"].get("status") == "True" and now["Degraded"].get("status") == "False"


def _pods(kube: ApiKube, namespace: str, name: str) -> list[dict[str, Any]]:
    pods = list_objects(kube, POD, namespace, labels_for({"metadata": {"name": name}}))
    live = [p for p in pods if not deep_get(p, "metadata.deletionTimestamp")]
    return sorted(live, key=lambda p: p["metadata"]["name"])


def _degraded(kube: ApiKube, namespace: str, name: str, reason: str) -> Any:
    now = _conditions(kube, namespace, name)
    return now if now["Degraded"].get("reason") == reason else None


def test_a_pod_on_a_node_that_stopped_reporting_makes_the_cr_degraded_not_progressing(
    kube: ApiKube, kube_api_client: client.ApiClient, namespace: str
) -> None:
    create_memcached(kube, namespace, "m", size=1)
    wait_for(lambda: _available(kube, namespace, "m"), what="the Memcached available")
    [pod] = _pods(kube, namespace, "m")
    victim, node = pod["metadata"]["name"], pod["spec"]["nodeName"]

    set_node_ready(kube_api_client, node, ready=False)
    try:
        now = wait_for(lambda: _degraded(kube, namespace, "m", "NodeLost"),
                       what="Degraded NodeLost")  # fmt: skip
        assert now["Degraded"]["status"] == "True"
        assert now["Degraded"]["message"] == (
            f"1 pod not ready on node {node}, whose Ready condition is not True (its kubelet "
            f"stopped reporting, or reports the node unwell), e.g. {victim}: Kubernetes evicts "
            "it after its toleration of a node unreachable or not ready (300 s), and "
            f"Deployment m starts a replacement on another node. Check the node: kubectl "
            f"describe node {node}"
        )
        # Nothing is starting: Kubernetes evicts the pod, then the Deployment replaces it.
        assert (now["Progressing"]["status"], now["Progressing"]["reason"]) == (
            "False",
            "RolloutComplete",
        )
        assert (now["Available"]["status"], now["Available"]["reason"]) == (
            "False",
            "PodsNotReady",
        )
    finally:
        set_node_ready(kube_api_client, node, ready=True)
    wait_for(lambda: _available(kube, namespace, "m"), what="Available once the node is back")


def test_a_failing_readiness_probe_is_starting_then_degraded_once_its_grace_ends(
    kube: ApiKube, kube_api_client: client.ApiClient, namespace: str
) -> None:
    create_memcached(kube, namespace, "m", size=2)
    wait_for(lambda: _available(kube, namespace, "m"), what="the Memcached available")
    victim = _pods(kube, namespace, "m")[0]["metadata"]["name"]

    make_unready(kube_api_client, namespace, victim)

    def starting() -> Any:
        now = _conditions(kube, namespace, "m")
        told = now["Progressing"].get("reason") == "PodsStarting"
        return now if told and now["Degraded"].get("status") == "False" else None

    now = wait_for(starting, what="Progressing PodsStarting within the grace")
    assert now["Progressing"]["message"] == "1/2 pods ready"

    # Nothing changes in the cluster from here: only the requeue at the grace's end tells.
    now = wait_for(lambda: _degraded(kube, namespace, "m", "ReadinessFailing"),
                   timeout=UNREADY_GRACE_SECONDS + 60, what="Degraded ReadinessFailing")  # fmt: skip
    assert now["Degraded"]["status"] == "True"
    assert now["Degraded"]["message"] == (
        "Container memcached fails its readiness probe: 1 pod running but not ready, e.g. "
        f"{victim}. Its Events say why: kubectl -n {namespace} describe pod {victim}"
    )
    assert (now["Progressing"]["status"], now["Progressing"]["reason"]) == (
        "False",
        "RolloutComplete",
    )
    assert now["Available"]["status"] == "False"

    make_ready(kube_api_client, namespace, victim)
    wait_for(lambda: _available(kube, namespace, "m"), what="Available once the probe passes")
