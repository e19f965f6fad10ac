"""Pods a ResourceQuota refuses, diagnosed: a Memcached bigger than its namespace's `pods`
quota gets one pod, and its page and `opsboard_diagnose` name the quota and what to do,
where they said "Progressing ... nothing stands in the way yet". A BookStore's MongoDB
StatefulSet, which has no ReplicaFailure condition, is diagnosed from its FailedCreate
Events. A WebServer's NodePort Service a `services.nodeports` quota refuses is said as
the quota's, not as a missing grant, and created by itself once the quota is raised.
kubesim enforces the quota as kube-apiserver does, and a real cluster
(OPSBOARD_TEST_KUBECONFIG) runs the same tests."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from kubernetes import client

from controllers.base import SERVICE
from controllers.bookstore.desired import BOOKSTORE
from controllers.conditions import condition_of
from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from controllers.webserver.desired import WEBSERVER
from opsboard.engine.models import ReconcileRun
from opsboard.mirror.models import KubeObject
from tests.diagnosis.memcached_run import create_memcached, start_operator_in, wait_degraded
from tests.fixtures.celery import EngineProcesses
from tests.kubesim.cluster.helpers import create_limit_range, create_quota
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _mirrored_failure(namespace: str) -> bool:
    """The mirror holds a ReplicaSet of the namespace with ReplicaFailure."""
    rows = KubeObject.objects.filter(kind="ReplicaSet", namespace=namespace)
    return any(
        c.get("type") == "ReplicaFailure" and c.get("status") == "True"
        for row in rows
        for c in (row.status or {}).get("conditions") or []
    )


def test_a_memcached_past_the_pods_quota_is_diagnosed_naming_the_quota(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client, settings: Any,
) -> None:  # fmt: skip
    start_operator_in(engine, namespace)
    create_quota(client.CoreV1Api(kube_api_client), namespace, {"pods": "1"})
    create_memcached(cluster_kube, namespace, "capped", size=3)
    wait_for(lambda: _mirrored_failure(namespace), what="ReplicaFailure in the mirror")

    response = viewer_client.get(f"/k/memcached/{namespace}/capped/")
    finding = response.context["diagnosis"].findings[0]
    assert finding.code == "ReplicaFailure"
    assert "is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1" in (
        finding.what
    )
    assert f"kubectl -n {namespace} describe resourcequota q" in finding.todo
    assert 'data-code="ReplicaFailure"' in response.content.decode()

    out = StringIO()
    call_command("opsboard_diagnose", "memcached", f"{namespace}/capped", stdout=out)
    assert "[ReplicaFailure]" in out.getvalue() and "exceeded quota: q" in out.getvalue()
    assert "nothing stands in the way yet" not in out.getvalue()


def test_a_memcached_whose_pods_state_no_requests_the_quota_wants_is_told_of_a_limitrange(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client,
) -> None:  # fmt: skip
    """A shared cluster's usual quota, on cpu: the operator's pods state no requests, so the
    API server refuses each one; raising the quota would not help."""
    start_operator_in(engine, namespace)
    core = client.CoreV1Api(kube_api_client)
    create_quota(core, namespace, {"requests.cpu": "2"})
    create_memcached(cluster_kube, namespace, "unstated", size=1)
    wait_for(lambda: _mirrored_failure(namespace), what="ReplicaFailure in the mirror")

    finding = (
        viewer_client.get(f"/k/memcached/{namespace}/unstated/").context["diagnosis"].findings[0]
    )
    assert finding.code == "ReplicaFailure"
    assert "failed quota: q: must specify requests.cpu for: memcached" in finding.what
    assert finding.todo.startswith(
        "ResourceQuota q limits compute resources, so every container must state them, and "
        "these pods state none: set them in the CR's spec.resources (requests and limits of "
        f"cpu and memory; kubectl -n {namespace} describe resourcequota q shows which it "
        "limits), or a LimitRange in the namespace with default requests and limits gives "
        "them to every pod."
    )
    assert "Raise ResourceQuota" not in finding.todo

    # Done as it says: the ReplicaSet's next try makes the pod, and the CR is Available.
    create_limit_range(core, namespace, "defaults", defaultRequest={"cpu": "100m"})
    wait_for(
        lambda: KubeObject.objects.filter(kind="Memcached", namespace=namespace,
                                          health="Available").exists(),
        what="the Memcached available once its pods have defaults", timeout=120,
    )  # fmt: skip


def test_a_memcached_whose_pods_state_no_requests_is_served_once_its_cr_states_them(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str,
) -> None:  # fmt: skip
    """The other way the advice gives: the CR's spec.resources, for its pods alone."""
    start_operator_in(engine, namespace)
    create_quota(client.CoreV1Api(kube_api_client), namespace, {"requests.memory": "1Gi"})
    create_memcached(cluster_kube, namespace, "unstated", size=1)
    # The CR's status follows the Deployment's ReplicaFailure by the run that reads it.
    wait_degraded(cluster_kube, MEMCACHED, namespace, "unstated", "PodsRefused")

    resources = {"requests": {"memory": "96Mi"}, "limits": {"memory": "128Mi"}}
    cluster_kube.patch(MEMCACHED, namespace, "unstated", {"spec": {"resources": resources}})
    wait_for(
        lambda: KubeObject.objects.filter(kind="Memcached", namespace=namespace,
                                          health="Available").exists(),
        what="the Memcached available once its pods state their memory", timeout=120,
    )  # fmt: skip
    [pod] = client.CoreV1Api(kube_api_client).list_namespaced_pod(namespace).items
    assert pod.spec.containers[0].resources.to_dict()["requests"] == {"memory": "96Mi"}


def _mirrored_refusal(namespace: str) -> bool:
    """The mirror holds a FailedCreate Event about a StatefulSet of the namespace."""
    rows = KubeObject.objects.filter(kind="Event", namespace=namespace)
    return any(
        row.body.get("reason") == "FailedCreate"
        and row.body["involvedObject"].get("kind") == "StatefulSet"
        for row in rows
    )


def test_a_bookstore_whose_database_outgrows_the_pods_quota_is_diagnosed_from_its_events(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client,
) -> None:  # fmt: skip
    start_operator_in(engine, namespace, "controllers.bookstore")
    create_quota(client.CoreV1Api(kube_api_client), namespace, {"pods": "2"})
    cluster_kube.create(BOOKSTORE, {
        "apiVersion": BOOKSTORE.api_version, "kind": "BookStore",
        "metadata": {"name": "shop", "namespace": namespace},
        "spec": {"bookApp": {"replicas": 1}, "bookDB": {"replicas": 1, "dbSize": "1Gi"}},
    })  # fmt: skip
    wait_for(lambda: KubeObject.objects.filter(kind="BookStore", namespace=namespace,
                                               health="Available").exists(),
             what="the BookStore available with its two pods")  # fmt: skip
    cluster_kube.patch(BOOKSTORE, namespace, "shop", {"spec": {"bookDB": {"replicas": 2}}})
    wait_for(lambda: _mirrored_refusal(namespace), what="FailedCreate in the mirror")

    def refused() -> Any:
        page = viewer_client.get(f"/k/bookstore/{namespace}/shop/")
        findings = page.context["diagnosis"].findings
        return findings and findings[0].code == "FailedCreate" and (page, findings[0])

    # The StatefulSet's status (one pod of two) may reach the mirror after the Event.
    page, finding = wait_for(refused, what="the FailedCreate finding")
    assert finding.subject.startswith("StatefulSet ")
    assert "in StatefulSet" in finding.what and "failed error: pods" in finding.what
    assert "is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2" in (
        finding.what
    )
    assert f"kubectl -n {namespace} describe resourcequota q" in finding.todo
    # The database's pods are refused: its replicas, not the app's, are what to lower.
    assert "or lower the CR's spec.bookDB.replicas;" in finding.todo, finding.todo
    assert 'data-code="FailedCreate"' in page.content.decode()

    out = StringIO()
    call_command("opsboard_diagnose", "bookstore", f"{namespace}/shop", stdout=out)
    assert "[FailedCreate]" in out.getvalue() and "exceeded quota: q" in out.getvalue()


def test_a_webserver_whose_nodeport_the_quota_refuses_is_served_once_it_is_raised(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client,
) -> None:  # fmt: skip
    engine.extra_env["OPSBOARD_DENIED_RETRY"] = "0.5"  # a raised quota is looked for this often
    start_operator_in(engine, namespace, "controllers.webserver")
    core = client.CoreV1Api(kube_api_client)
    create_quota(core, namespace, {"services.nodeports": "0"})
    cluster_kube.create(WEBSERVER, {
        "apiVersion": WEBSERVER.api_version, "kind": "WebServer",
        "metadata": {"name": "web", "namespace": namespace}, "spec": {"replicas": 1},
    })  # fmt: skip
    wait_for(
        lambda: ReconcileRun.objects.filter(namespace=namespace, name="web",
                                            error__contains="exceeded quota").exists(),
        what="a run refused by the quota",
    )  # fmt: skip

    def said() -> Any:
        findings = viewer_client.get(f"/k/webserver/{namespace}/web/").context["diagnosis"].findings
        return next((f for f in findings if f.code == "Forbidden"), None)

    finding = wait_for(said, what="the refusal diagnosed")
    assert "requested: services.nodeports=1" in finding.what
    assert finding.todo.startswith(f"Raise ResourceQuota q (kubectl -n {namespace} describe")
    assert "ClusterRole" not in finding.todo

    # Raised, and nothing else done: the refused run's retry creates the Service.
    core.patch_namespaced_resource_quota(
        "q", namespace, {"spec": {"hard": {"services.nodeports": "1"}}}
    )
    wait_for(lambda: cluster_kube.get(SERVICE, namespace, "web-service"), what="the Service")
    wait_for(
        lambda: condition_of(cluster_kube.get(WEBSERVER, namespace, "web"), "Degraded").get("status")
        == "False",
        what="Degraded taken back",
    )  # fmt: skip
