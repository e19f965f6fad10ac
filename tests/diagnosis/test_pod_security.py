"""Pod Security admission: a WebServer (nginx runs as root) in a namespace that enforces the
restricted standard has its pods refused, and the CR's Degraded condition and its page say
which checks they fail and how to run them; the namespace relabelled baseline, the pods are
made. A Memcached, whose pods meet restricted, runs there. Real watcher and worker, on
kubesim and on a real cluster (OPSBOARD_TEST_KUBECONFIG)."""

from __future__ import annotations

import pytest
from django.test import Client
from kubernetes import client

from controllers.kube import ApiKube
from controllers.webserver.desired import WEBSERVER
from opsboard.mirror.models import KubeObject
from tests.diagnosis.memcached_run import (
    create_memcached,
    page_finding,
    start_operator_in,
    wait_degraded,
)
from tests.fixtures.celery import EngineProcesses
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)
ENFORCE = "pod-security.kubernetes.io/enforce"


def _enforce(core: client.CoreV1Api, namespace: str, level: str) -> None:
    core.patch_namespace(namespace, {"metadata": {"labels": {ENFORCE: level}}})


def test_pods_the_restricted_standard_refuses_are_told_with_the_label_that_admits_them(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client,
) -> None:  # fmt: skip
    core = client.CoreV1Api(kube_api_client)
    _enforce(core, namespace, "restricted")
    start_operator_in(engine, namespace, "controllers.memcached,controllers.webserver")
    cluster_kube.create(WEBSERVER, {
        "apiVersion": WEBSERVER.api_version, "kind": "WebServer",
        "metadata": {"name": "web", "namespace": namespace}, "spec": {"replicas": 1},
    })  # fmt: skip
    create_memcached(cluster_kube, namespace, "cache", size=1)
    advice = (
        f"Namespace {namespace} enforces the restricted Pod Security Standard, and these pods "
        "need what it forbids (the checks above). Run the CR in a namespace at baseline, or, "
        "if your cluster's policy lets this one be baseline: kubectl label namespace "
        f"{namespace} pod-security.kubernetes.io/enforce=baseline --overwrite."
    )

    finding = wait_for(
        lambda: page_finding(viewer_client, f"/k/webserver/{namespace}/web/", "ReplicaFailure"),
        what="the ReplicaFailure finding",
        timeout=60,
    )
    assert 'violates PodSecurity "restricted:latest": ' in finding.what
    assert "runAsNonRoot != true" in finding.what
    assert finding.todo == advice
    degraded = wait_degraded(cluster_kube, WEBSERVER, namespace, "web", "PodsRefused")
    assert degraded["message"].endswith(advice)
    # The Memcached's pods meet the restricted standard: served beside it.
    wait_for(
        lambda: KubeObject.objects.filter(kind="Memcached", namespace=namespace, name="cache",
                                          health="Available").exists(),
        what="the Memcached available under restricted", timeout=120,
    )  # fmt: skip

    _enforce(core, namespace, "baseline")  # as advised
    wait_for(
        lambda: KubeObject.objects.filter(kind="WebServer", namespace=namespace, name="web",
                                          health="Available").exists(),
        what="the WebServer available at baseline", timeout=120,
    )  # fmt: skip
