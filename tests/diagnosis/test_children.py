"""A child write the API server refuses, diagnosed end to end (real watcher and worker on
kubesim, or a real cluster): the Diagnosis names the child, not a field of the CR, and says
what to do; a NodePort another Service holds is retried until it is free."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from django.test import Client

from controllers.base import DEPLOYMENT, SERVICE
from controllers.conditions import condition_of
from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from controllers.webserver.desired import WEBSERVER
from opsboard.engine.models import ReconcileRun
from tests.dashboard.mirror_factory import MEMCACHED_API
from tests.diagnosis.memcached_run import page_finding
from tests.fixtures.celery import EngineProcesses
from tests.support.review import review
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _start(engine: EngineProcesses, namespace: str) -> None:
    engine.controllers = "controllers.memcached,controllers.webserver"
    engine.start_worker()
    engine.start_watcher()


def _findings(client: Client, path: str) -> dict[str, Any]:
    return {f.code: f for f in client.get(path).context["diagnosis"].findings}


def test_a_deployment_made_by_kubectl_in_the_crs_way_is_named_with_what_to_do(
    engine: EngineProcesses, cluster_kube: ApiKube, namespace: str, viewer_client: Client
) -> None:  # fmt: skip
    # What `kubectl create deployment squatter --image=nginx:1.25` makes: no owner, and a
    # selector (immutable) that is not the operator's.
    labels = {"app": "squatter"}
    cluster_kube.create(DEPLOYMENT, {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "squatter", "namespace": namespace, "labels": labels},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]}}},
    })  # fmt: skip
    _start(engine, namespace)
    cluster_kube.create(MEMCACHED, {
        "apiVersion": MEMCACHED_API, "kind": "Memcached",
        "metadata": {"name": "squatter", "namespace": namespace}, "spec": {"size": 2},
    })  # fmt: skip
    wait_for(
        lambda: ReconcileRun.objects.filter(
            namespace=namespace, name="squatter", error__contains="422"
        ).exists(),
        timeout=90, what="the adoption of the Deployment refused",
    )  # fmt: skip

    path = f"/k/memcached/{namespace}/squatter/"
    findings = _findings(viewer_client, path)
    refused = findings["Invalid"]
    assert refused.subject == "Deployment squatter"
    assert "Deployment squatter already exists and was not created by opsboard" in refused.what
    assert "cannot change its spec.selector, which is immutable" in refused.what
    assert f"kubectl -n {namespace} delete deployment squatter" in refused.todo
    assert "opsboard then creates its own" in refused.todo
    assert "rename this Memcached" in refused.todo
    assert "Reconcile now" not in refused.todo  # its deletion wakes the Memcached
    assert "Change spec.selector" not in refused.todo  # a Memcached has no spec.selector
    assert "MissingChild" not in findings and "UnownedChild" not in findings
    tree = viewer_client.get(path).context["tree"]
    assert [(n.health, n.detail) for _, n in tree if n.kind == "Deployment"] == [
        (
            "failed",
            "exists, created outside opsboard (no owner), not adopted yet: see the Diagnosis",
        )
    ]

    # The advice, followed: its deletion wakes the Memcached that expects it by name.
    cluster_kube.delete(DEPLOYMENT, namespace, "squatter")
    ours = wait_for(
        lambda: cluster_kube.get(DEPLOYMENT, namespace, "squatter"),
        timeout=90, what="the operator's own Deployment",
    )  # fmt: skip
    assert ours["metadata"]["ownerReferences"][0]["kind"] == "Memcached"


def _clash(engine: EngineProcesses, kube: ApiKube, namespace: str) -> int:
    """Service holder on a random NodePort, then the operators and WebServer clash asking
    for the same port; the port."""
    port = random.randint(30100, 32700)
    kube.create(SERVICE, {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "holder", "namespace": namespace},
        "spec": {"type": "NodePort", "selector": {"app": "holder"},
                 "ports": [{"port": 80, "nodePort": port}]},
    })  # fmt: skip
    _start(engine, namespace)
    kube.create(WEBSERVER, {
        "apiVersion": "my.domain/v1", "kind": "WebServer",
        "metadata": {"name": "clash", "namespace": namespace},
        "spec": {"replicas": 1, "image": "nginx:1.25.3", "nodePort": port},
    })  # fmt: skip
    return port


def test_a_nodeport_in_use_names_its_service_and_is_retried_once_it_is_free(
    engine: EngineProcesses, cluster_kube: ApiKube, namespace: str, viewer_client: Client
) -> None:
    port = _clash(engine, cluster_kube, namespace)
    run = wait_for(
        lambda: ReconcileRun.objects.filter(
            namespace=namespace, name="clash", error__contains="already allocated"
        ).first(),
        timeout=90, what="the Service refused its NodePort",
    )  # fmt: skip
    assert run.outcome == "error"  # retried with backoff: the port may be freed
    degraded = condition_of(cluster_kube.get(WEBSERVER, namespace, "clash"), "Degraded")
    assert (degraded.get("status"), degraded.get("reason")) == ("True", "ReconcileFailed")

    taken = _findings(viewer_client, f"/k/webserver/{namespace}/clash/")["PortTaken"]
    assert f"NodePort {port} is already in use by Service {namespace}/holder" in taken.what
    assert "Set another spec.nodePort, or remove it" in taken.todo
    assert "spec.ports[0]" not in taken.todo

    cluster_kube.delete(SERVICE, namespace, "holder")  # no change of the WebServer
    created = wait_for(
        lambda: cluster_kube.get(SERVICE, namespace, "clash-service"),
        timeout=120, what="the WebServer's Service, once the port is free",
    )  # fmt: skip
    assert created["spec"]["ports"][0]["nodePort"] == port
    wait_for(
        lambda: condition_of(cluster_kube.get(WEBSERVER, namespace, "clash"), "Degraded")
        .get("status") == "False",
        timeout=60, what="Degraded cleared",
    )  # fmt: skip


def test_a_nodeport_in_use_is_given_up_from_the_change_form_the_advice_points_to(
    engine: EngineProcesses, cluster_kube: ApiKube, namespace: str, operator_client: Client
) -> None:
    """Removed through the form (reviewed, applied, audited), the WebServer's NodePort is
    the cluster's choice: its Service is created at once, with no wait for the port."""
    port = _clash(engine, cluster_kube, namespace)
    url, hx = f"/k/webserver/{namespace}/clash/", {"HTTP_HX_REQUEST": "true"}
    taken = wait_for(
        lambda: page_finding(operator_client, url, "PortTaken"), timeout=90,
        what="the NodePort in use on the page",
    )  # fmt: skip
    assert taken.todo.startswith("Set another spec.nodePort, or remove it")
    page = operator_client.get(url).content.decode()
    assert re.search(
        r'The <a href="#cr-patch-[^"]+">change form</a> above sets spec\.nodePort\.', page
    )

    form = {"size": "1", "image": "nginx:1.25.3", "node_port": ""}
    html, hidden = review(operator_client, url, form, **hx)
    assert re.search(rf"spec\.nodePort</td><td><del>{port}</del></td><td><ins>—<", html), html
    assert "Applied" in operator_client.post(url + "patch/apply/", hidden, **hx).content.decode()
    created = wait_for(
        lambda: cluster_kube.get(SERVICE, namespace, "clash-service"),
        timeout=60, what="the WebServer's Service, on a port the cluster chose",
    )  # fmt: skip
    assert created["spec"]["ports"][0]["nodePort"] not in (port, None)
    wait_for(
        lambda: condition_of(cluster_kube.get(WEBSERVER, namespace, "clash"), "Degraded")
        .get("status") == "False",
        timeout=60, what="Degraded cleared",
    )  # fmt: skip
