"""A BookStore's database claims that the API server will not create or grow: a
ResourceQuota on storage, a LimitRange's bound on each claim, a StorageClass that does
not allow expansion. The CR's Degraded condition and its page say which and what to do;
once an administrator raises the quota or allows expansion, the refused growth is tried
again and goes through with no change of the CR. Real watcher and worker, on kubesim and
on a real cluster (OPSBOARD_TEST_KUBECONFIG)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from kubernetes import client

from controllers.base import EVENT, PVC
from controllers.bookstore.desired import BOOKSTORE
from controllers.conditions import condition_of
from controllers.fields import deep_get
from controllers.kube import ApiKube
from opsboard.audit.models import AuditEntry
from opsboard.mirror.models import KubeObject
from tests.controllers.cluster import list_objects
from tests.controllers.manifests import db_claim
from tests.diagnosis.memcached_run import page_finding, start_operator_in, wait_degraded
from tests.fixtures.celery import EngineProcesses
from tests.kubesim.cluster.helpers import create_quota
from tests.support.review import review
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)
CLAIM = "data-shop-db-0"


def _bookstore(engine: EngineProcesses, kube: ApiKube, namespace: str) -> None:
    """The BookStore operator, retrying a refused write every half second, and a BookStore
    `shop` of one app pod and one 1Gi DB claim, available."""
    engine.extra_env["OPSBOARD_DENIED_RETRY"] = "0.5"  # a raised quota is looked for this often
    start_operator_in(engine, namespace, "controllers.bookstore")
    kube.create(BOOKSTORE, {
        "apiVersion": BOOKSTORE.api_version, "kind": "BookStore",
        "metadata": {"name": "shop", "namespace": namespace},
        "spec": {"bookApp": {"replicas": 1}, "bookDB": {"replicas": 1, "dbSize": "1Gi"}},
    })  # fmt: skip
    wait_for(
        lambda: KubeObject.objects.filter(kind="BookStore", namespace=namespace, name="shop",
                                          health="Available").exists(),
        what="the BookStore available", timeout=120,
    )  # fmt: skip


def _grow(kube: ApiKube, namespace: str, size: str) -> None:
    kube.patch(BOOKSTORE, namespace, "shop", {"spec": {"bookDB": {"dbSize": size}}})


def _claim_size(kube: ApiKube, namespace: str) -> Any:
    return deep_get(kube.get(PVC, namespace, CLAIM), "spec.resources.requests.storage")


def _recovered(kube: ApiKube, namespace: str) -> None:
    """The claim grown to 2Gi and Degraded taken back."""
    wait_for(lambda: _claim_size(kube, namespace) == "2Gi", what="the claim grown to 2Gi")
    wait_for(
        lambda: condition_of(kube.get(BOOKSTORE, namespace, "shop"), "Degraded").get("status")
        == "False",
        what="Degraded taken back",
    )  # fmt: skip


def test_growth_past_a_storage_quota_is_told_and_taken_once_the_quota_is_raised(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client,
) -> None:  # fmt: skip
    core = client.CoreV1Api(kube_api_client)
    create_quota(core, namespace, {"requests.storage": "1536Mi"})
    _bookstore(engine, cluster_kube, namespace)
    _grow(cluster_kube, namespace, "2Gi")

    degraded = wait_degraded(cluster_kube, BOOKSTORE, namespace, "shop", "VolumeExpansionFailed")
    message = degraded["message"]
    assert message.startswith(f"Could not grow PersistentVolumeClaim {CLAIM} to 2Gi: ")
    assert (
        "exceeded quota: q, requested: requests.storage=1Gi, used: requests.storage=1Gi, "
        "limited: requests.storage=1536Mi" in message
    )
    advice = (
        f"Raise ResourceQuota q (kubectl -n {namespace} describe resourcequota q) or lower "
        "the CR's spec.bookDB.dbSize (no lower than the claims already are: a claim cannot "
        "shrink); the claims already there count against it."
    )
    assert message.endswith(advice)
    assert _claim_size(cluster_kube, namespace) == "1Gi"

    finding = wait_for(
        lambda: page_finding(viewer_client, f"/k/bookstore/{namespace}/shop/", "Forbidden"),
        what="the refused growth on the page",
    )
    assert "exceeded quota: q" in finding.what
    assert finding.todo == f"{advice} No grant changes this."
    assert "ClusterRole" not in finding.todo

    # Raised, and nothing else done: the refused run's retry grows the claim.
    core.patch_namespaced_resource_quota(
        "q", namespace, {"spec": {"hard": {"requests.storage": "3Gi"}}}
    )
    _recovered(cluster_kube, namespace)

    # One refusal, one Warning, in the operator's words: its retries (every half second
    # here) post none, nor the engine a ReconcileError beside it.
    def events() -> dict[str, list[dict[str, Any]]] | None:
        found: dict[str, list[dict[str, Any]]] = {}
        for event in list_objects(cluster_kube, EVENT, namespace):
            if event["involvedObject"].get("kind") == "BookStore":
                found.setdefault(event["reason"], []).append(event)
        return found if "ExpandingVolumes" in found else None  # the last run's: after all

    told = wait_for(events, what="the claim's growth told in an Event")
    assert [e["type"] for e in told["VolumeExpansionFailed"]] == ["Warning"]
    assert told["VolumeExpansionFailed"][0].get("count", 1) == 1
    assert "exceeded quota: q" in told["VolumeExpansionFailed"][0]["message"]
    assert "ReconcileError" not in told


def test_growth_past_a_limitranges_bound_on_claims_names_the_bound(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str,
) -> None:  # fmt: skip
    core = client.CoreV1Api(kube_api_client)
    bound = {"type": "PersistentVolumeClaim", "max": {"storage": "1536Mi"}}
    body = {"metadata": {"name": "claims"}, "spec": {"limits": [bound]}}
    core.create_namespaced_limit_range(namespace, body)
    _bookstore(engine, cluster_kube, namespace)
    _grow(cluster_kube, namespace, "2Gi")

    degraded = wait_degraded(cluster_kube, BOOKSTORE, namespace, "shop", "VolumeExpansionFailed")
    assert (
        "maximum storage usage per PersistentVolumeClaim is 1536Mi, but request is 2Gi"
        in degraded["message"]
    )
    assert degraded["message"].endswith(
        "A LimitRange in the namespace bounds the storage each PersistentVolumeClaim may ask "
        f"for (kubectl -n {namespace} describe limitrange): bring the CR's spec.bookDB.dbSize "
        "within it, or ask for the bounds to change."
    )

    bound["max"] = {"storage": "4Gi"}
    core.replace_namespaced_limit_range("claims", namespace, body)
    _recovered(cluster_kube, namespace)


def test_growth_a_storage_class_does_not_allow_is_taken_once_it_does(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client,
) -> None:  # fmt: skip
    storage = client.StorageV1Api(kube_api_client)
    default = storage.read_storage_class("standard")
    name = f"fixed-{namespace}"
    storage.create_storage_class({
        "metadata": {"name": name}, "provisioner": default.provisioner,
        "allowVolumeExpansion": False,
    })  # fmt: skip
    try:
        cluster_kube.create(PVC, db_claim(namespace, "1Gi", storage_class=name))  # its pod's
        _bookstore(engine, cluster_kube, namespace)
        _grow(cluster_kube, namespace, "2Gi")

        degraded = wait_degraded(
            cluster_kube, BOOKSTORE, namespace, "shop", "VolumeExpansionFailed"
        )
        allow = f"""kubectl patch storageclass {name} -p '{{"allowVolumeExpansion": true}}'"""
        assert "only dynamically provisioned pvc can be resized" in degraded["message"]
        assert f"StorageClass {name} does not allow volumes to grow" in degraded["message"]
        assert allow in degraded["message"]
        finding = wait_for(
            lambda: page_finding(viewer_client, f"/k/bookstore/{namespace}/shop/", "Forbidden"),
            what="the refused growth on the page",
        )
        assert allow in finding.todo

        storage.patch_storage_class(name, {"allowVolumeExpansion": True})
        _recovered(cluster_kube, namespace)
    finally:
        storage.delete_storage_class(name)


def test_a_new_replicas_claim_past_the_storage_quota_is_told_as_the_quotas(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str,
) -> None:  # fmt: skip
    create_quota(client.CoreV1Api(kube_api_client), namespace, {"requests.storage": "1536Mi"})
    _bookstore(engine, cluster_kube, namespace)
    cluster_kube.patch(BOOKSTORE, namespace, "shop", {"spec": {"bookDB": {"replicas": 2}}})

    degraded = wait_degraded(cluster_kube, BOOKSTORE, namespace, "shop", "PodsRefused")
    # The claim's FailedCreate, or the pod's after it, which names the claim's refusal too.
    assert (
        'persistentvolumeclaims "data-shop-db-1" is forbidden: exceeded quota: q, '
        "requested: requests.storage=1Gi" in degraded["message"]
    )
    assert f"Raise ResourceQuota q (kubectl -n {namespace} describe" in degraded["message"]
    assert "lower the CR's spec.bookDB.dbSize" in degraded["message"]


def test_a_claim_grown_from_the_dashboard_is_never_shrunk_back_by_a_revert(
    engine: EngineProcesses, cluster_kube: ApiKube, namespace: str, operator_client: Client
) -> None:
    """The volume size in the change form grows the claim, reviewed and audited as any
    change; a revert of that growth, which the API server would take and the operator then
    refuse (a claim cannot shrink), is refused at its review and at a forged apply, with
    nothing changed."""
    _bookstore(engine, cluster_kube, namespace)
    url, hx = f"/k/bookstore/{namespace}/shop/", {"HTTP_HX_REQUEST": "true"}
    spec = cluster_kube.get(BOOKSTORE, namespace, "shop")["spec"]
    form = {"size": "1", "image": spec["bookApp"]["image"], "memory": "", "memory_mongodb": "",
            "size_mongodb": "1", "image_mongodb": spec["bookDB"]["image"], "storage": "2Gi"}  # fmt: skip
    html, hidden = review(operator_client, url, form, **hx)
    assert re.search(r"spec\.bookDB\.dbSize</td><td><del>1Gi</del></td><td><ins>2Gi<", html)
    assert "Applied" in operator_client.post(url + "patch/apply/", hidden, **hx).content.decode()
    _recovered(cluster_kube, namespace)

    def claims_in_the_mirror() -> Any:
        shop = KubeObject.objects.get(kind="BookStore", namespace=namespace, name="shop")
        return [c.get("requested") for c in shop.status.get("claims") or []] == ["2Gi"]

    wait_for(claims_in_the_mirror, what="the grown claim in the CR's status, mirrored")
    grown = AuditEntry.objects.get(result=AuditEntry.Result.APPLIED)
    assert (grown.before, grown.after) == (
        {"spec.bookDB.dbSize": "1Gi"},
        {"spec.bookDB.dbSize": "2Gi"},
    )

    page = operator_client.get(url).content.decode()
    assert re.search(
        r'<button type="button" disabled aria-describedby="revert-why-[^"]+">Revert', page
    )
    assert (
        f"Its revert would be refused: spec.bookDB.dbSize 1Gi is smaller than the claims {CLAIM} "
        "(2Gi): Kubernetes cannot shrink a PersistentVolumeClaim.</small>" in page
    )
    refusal = (
        f"Nothing was changed: spec.bookDB.dbSize 1Gi is smaller than the claims {CLAIM} "
        "(2Gi): Kubernetes cannot shrink a PersistentVolumeClaim. Give 2Gi or more."
    )
    html = operator_client.post(url + f"history/a{grown.pk}/revert/", {}, **hx).content.decode()
    assert refusal in html
    assert ">Apply</button>" not in html
    live = cluster_kube.get(BOOKSTORE, namespace, "shop")
    forged = {"revert": f"a{grown.pk}", "resource_version": live["metadata"]["resourceVersion"]}
    html = operator_client.post(url + "patch/apply/", forged, **hx).content.decode()
    assert refusal in html
    rejected = AuditEntry.objects.get(result=AuditEntry.Result.REJECTED)
    assert (rejected.after, rejected.message) == ({"spec.bookDB.dbSize": "1Gi"}, refusal)
    assert cluster_kube.get(BOOKSTORE, namespace, "shop")["spec"]["bookDB"]["dbSize"] == "2Gi"
    assert _claim_size(cluster_kube, namespace) == "2Gi"
