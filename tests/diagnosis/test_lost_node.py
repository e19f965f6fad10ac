"""A node that stops reporting, diagnosed end to end (real watcher and worker on kubesim,
whose node controller takes a node's kubelet away on request; the rig's fake kubelet cannot
silence one node): the Memcached's pod on it turns not ready, the Memcached Degraded, and
its page, "Needs attention" and opsboard_diagnose name the node, the pod and what
Kubernetes does next, once."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from kubernetes import client

from controllers.kube import ApiKube
from opsboard.diagnosis.observed import Finding
from opsboard.mirror.models import KubeObject
from tests.diagnosis.memcached_run import create_memcached, start_memcached_operator
from tests.fixtures.celery import EngineProcesses
from tests.kubesim.cluster.helpers import set_node_ready
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.kubesim_only, pytest.mark.django_db(transaction=True)]


def test_pods_on_a_node_that_stopped_reporting_are_named_with_the_node(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client,
) -> None:  # fmt: skip
    start_memcached_operator(engine)
    create_memcached(cluster_kube, namespace, "cache", size=1)
    crs = KubeObject.objects.filter(kind="Memcached", namespace=namespace, name="cache")
    wait_for(lambda: crs.filter(health="Available").exists(), what="the Memcached available")
    [pod] = client.CoreV1Api(kube_api_client).list_namespaced_pod(namespace).items
    victim, node = pod.metadata.name, pod.spec.node_name

    set_node_ready(kube_api_client, node, ready=False)
    try:
        # The CR's own status says so too (Degraded, NodeLost: controllers.unready).
        wait_for(lambda: crs.filter(health="Degraded").exists(), what="the Memcached Degraded")
        path = f"/k/memcached/{namespace}/cache/"

        def named() -> tuple[Finding, str] | None:
            page = viewer_client.get(path)
            found = [f for f in page.context["diagnosis"].findings if f.code == "NodeLost"]
            return (found[0], page.content.decode()) if found else None

        finding, html = wait_for(named, what="the NodeLost finding")
        assert finding.subject == f"Node {node}"
        # When it was last heard from: the mirrored Node's Ready condition.
        assert re.match(
            rf"Node {node} stopped reporting \(its kubelet is down or the node is lost, last "
            r"heard from \d+ (s|min) ago\): 1 pod on it not ready for ",
            finding.what,
        ), finding.what
        assert f"({victim}). Kubernetes evicts it after its toleration of an unreachable " in (
            finding.what
        )
        assert "Deployment cache starts a replacement on another node." in finding.what
        assert f"kubectl describe node {node}" in finding.todo
        assert 'data-code="NodeLost"' in html
        # The readiness rule leaves these pods alone: their containers are not the cause. The
        # CR's Degraded NodeLost is not said a second time beside the finding that explains it.
        codes = [f.code for f in viewer_client.get(path).context["diagnosis"].findings]
        assert "NotReady" not in codes and codes.count("NodeLost") == 1

        # Degraded comes first in "Needs attention", told by the node's finding.
        attention = viewer_client.get("/").context["attention"]
        [listed] = [a for a in attention if a.cr.namespace == namespace]
        assert [f.code for f in listed.diagnosis.findings] == ["NodeLost"]

        out = StringIO()
        call_command("opsboard_diagnose", "memcached", f"{namespace}/cache", stdout=out)
        assert "[NodeLost]" in out.getvalue()
        assert node in out.getvalue() and victim in out.getvalue()
    finally:
        set_node_ready(kube_api_client, node, ready=True)
    wait_for(lambda: crs.filter(health="Available").exists(), what="the Memcached back")
