"""A pod whose readiness probe keeps failing, diagnosed end to end (real watcher and worker
on kubesim, whose kubelet fails the probe on request; the rig's cannot): the Memcached stays
Progressing, and once the pod has been unready past the grace its page names the pod, the
container and where the probe's answer is, where it said "nothing stands in the way yet"."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from kubernetes import client

from controllers.kube import ApiKube
from controllers.unready import UNREADY_GRACE_SECONDS
from opsboard.diagnosis.observed import Finding
from opsboard.mirror.models import KubeObject
from tests.diagnosis.memcached_run import create_memcached, start_memcached_operator
from tests.fixtures.celery import EngineProcesses
from tests.kubesim.cluster.helpers import make_unready
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.kubesim_only, pytest.mark.django_db(transaction=True)]


def _mirrored_unready(namespace: str, name: str) -> bool:
    row = KubeObject.objects.filter(kind="Pod", namespace=namespace, name=name).first()
    conditions = (row.status or {}).get("conditions") or [] if row else []
    return any(c["type"] == "Ready" and c["status"] == "False" for c in conditions)


def test_a_pod_whose_readiness_probe_fails_is_named_with_where_to_read_why(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client,
) -> None:  # fmt: skip
    start_memcached_operator(engine)
    create_memcached(cluster_kube, namespace, "cache", size=3)
    crs = KubeObject.objects.filter(kind="Memcached", namespace=namespace, name="cache")
    wait_for(lambda: crs.filter(health="Available").exists(), what="the Memcached available")
    pods = client.CoreV1Api(kube_api_client).list_namespaced_pod(namespace).items
    victim = sorted(p.metadata.name for p in pods)[0]

    make_unready(kube_api_client, namespace, victim)
    wait_for(lambda: _mirrored_unready(namespace, victim), what="the pod not ready in the mirror")
    wait_for(lambda: crs.filter(health="Progressing").exists(), what="the Memcached Progressing")

    path = f"/k/memcached/{namespace}/cache/"

    def named() -> tuple[Finding, str] | None:
        page = viewer_client.get(path)
        found = [f for f in page.context["diagnosis"].findings if f.code == "NotReady"]
        return (found[0], page.content.decode()) if found else None

    # Nothing is said while the pod may still be starting: the grace runs from Ready=False.
    finding, html = wait_for(named, timeout=UNREADY_GRACE_SECONDS + 60, interval=1.0,
                             what="the NotReady finding")  # fmt: skip
    assert finding.subject == f"Pod {victim}"
    assert "Not ready: 1 pod running but not ready for " in finding.what
    assert f"e.g. {victim}: container memcached fails its readiness probe." in finding.what
    assert f"kubectl -n {namespace} describe pod {victim}" in finding.todo
    assert f"kubectl -n {namespace} logs {victim} -c memcached" in finding.todo
    assert 'data-code="NotReady"' in html and 'href="#tree"' in html

    out = StringIO()
    call_command("opsboard_diagnose", "memcached", f"{namespace}/cache", stdout=out)
    assert "[NotReady]" in out.getvalue() and victim in out.getvalue()
    assert "nothing stands in the way yet" not in out.getvalue()
