"""A container the kubelet cannot start (CreateContainerConfigError for a Secret that is
not there), end to end: real watcher and worker on kubesim, whose runtime refuses a pod's
start on request (the rig's fake kubelet cannot; the kubelet's words are v1.28's). The
Memcached turns Degraded (ContainerCannotStart) with the kubelet's message, its page's
Diagnosis says what to create, and once the container can start the CR is Available again."""

from __future__ import annotations

import pytest
from django.test import Client
from kubernetes import client

from controllers.conditions import condition_of
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
from tests.kubesim.cluster.helpers import control
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.kubesim_only, pytest.mark.django_db(transaction=True)]
MISSING = 'secret "cache-auth" not found'


def test_a_container_that_cannot_start_is_degraded_and_diagnosed_in_the_kubelets_words(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client,
) -> None:  # fmt: skip
    start_operator_in(engine, namespace)
    create_memcached(cluster_kube, namespace, "cache", size=2)
    crs = KubeObject.objects.filter(kind="Memcached", namespace=namespace, name="cache")
    wait_for(lambda: crs.filter(health="Available").exists(), what="the Memcached available")
    pods = client.CoreV1Api(kube_api_client).list_namespaced_pod(namespace).items
    victim = sorted(p.metadata.name for p in pods)[0]
    where = f"/_kubesim/cluster/pods/{namespace}/{victim}/refuse-start"
    control(kube_api_client, "POST", where,
            {"reason": "CreateContainerConfigError", "message": MISSING})  # fmt: skip

    degraded = wait_degraded(cluster_kube, MEMCACHED, namespace, "cache", "ContainerCannotStart")
    assert degraded["message"] == (
        f"Container memcached cannot start (CreateContainerConfigError: {MISSING}): 1 pod "
        f"waits, e.g. {victim}"
    )
    url = f"/k/memcached/{namespace}/cache/"
    finding = wait_for(
        lambda: page_finding(viewer_client, url, "CreateContainerConfigError"),
        what="the finding on the page",
    )
    assert finding.what == (
        f"1 pod cannot start container memcached (CreateContainerConfigError), e.g. {victim}: "
        f"{MISSING}"
    )
    assert finding.todo.startswith(f"Create the Secret cache-auth in namespace {namespace}")
    pod = KubeObject.objects.get(kind="Pod", namespace=namespace, name=victim)
    assert pod.health == "Degraded"  # the pod's own row in the owner tree says so too

    control(kube_api_client, "DELETE", where)  # as if the Secret were created
    wait_for(
        lambda: (
            condition_of(cluster_kube.get(MEMCACHED, namespace, "cache"), "Available").get("status")
            == "True"
            and condition_of(cluster_kube.get(MEMCACHED, namespace, "cache"), "Degraded").get(
                "status"
            )
            == "False"
        ),
        what="the Memcached available again",
    )
    wait_for(
        lambda: page_finding(viewer_client, url, "CreateContainerConfigError") is None,
        what="the finding gone",
    )
