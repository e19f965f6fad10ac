"""A Memcached whose spec.resources ask for more than its namespace's LimitRange allows:
the API server refuses its pods, and the CR's Degraded condition and its page say which
bound and to bring spec.resources within it; done, the pods are made. Real watcher and
worker, on kubesim and on a real cluster (OPSBOARD_TEST_KUBECONFIG)."""

from __future__ import annotations

import pytest
from django.test import Client
from kubernetes import client

from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from opsboard.mirror.models import KubeObject
from tests.diagnosis.memcached_run import (
    create_memcached,
    page_finding,
    start_operator_in,
    wait_degraded,
)
from tests.fixtures.celery import EngineProcesses
from tests.kubesim.cluster.helpers import create_limit_range
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_resources_above_a_limitranges_max_are_told_to_come_within_it(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client,
) -> None:  # fmt: skip
    core = client.CoreV1Api(kube_api_client)
    create_limit_range(core, namespace, "bounds", max={"memory": "1Gi"})
    start_operator_in(engine, namespace)
    resources = {"limits": {"memory": "2Gi"}}
    create_memcached(cluster_kube, namespace, "big", size=1, resources=resources)
    advice = (
        "A LimitRange in the namespace bounds what each container may ask for (kubectl -n "
        f"{namespace} describe limitrange): bring the CR's spec.resources within it, or ask "
        "for the bounds to change."
    )

    finding = wait_for(
        lambda: page_finding(viewer_client, f"/k/memcached/{namespace}/big/", "ReplicaFailure"),
        what="the ReplicaFailure finding",
    )
    assert "maximum memory usage per Container is 1Gi, but limit is 2Gi" in finding.what
    assert finding.todo == advice
    degraded = wait_degraded(cluster_kube, MEMCACHED, namespace, "big", "PodsRefused")
    assert degraded["message"].endswith(advice)

    cluster_kube.patch(
        MEMCACHED, namespace, "big", {"spec": {"resources": {"limits": {"memory": "512Mi"}}}}
    )
    wait_for(
        lambda: KubeObject.objects.filter(kind="Memcached", namespace=namespace, name="big",
                                          health="Available").exists(),
        what="the Memcached available within the bounds", timeout=120,
    )  # fmt: skip
