"""BookStore end to end: the app, its MongoDB and the DB's claims, healed through watches.

The engine runs the BookStore controller alone (it is not among the defaults yet). Only the
public API is used, so these run unchanged against a real cluster through
OPSBOARD_TEST_KUBECONFIG (whose default StorageClass must allow volume expansion).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from kubernetes import client

from controllers.base import (
    DEPLOYMENT,
    EVENT,
    POD,
    PVC,
    SERVICE,
    STATEFULSET,
    Key,
    PermanentError,
)
from controllers.bookstore import CONTROLLER
from controllers.bookstore.desired import BOOKSTORE, app_labels, db_labels
from controllers.conditions import condition_of
from controllers.fields import deep_get
from controllers.kube import ApiKube
from tests.controllers.cluster import (
    CountingKube,
    by_hand,
    kubectl,
    list_objects,
)
from tests.controllers.manifests import K8S, db_claim
from tests.controllers.runs import actions_since
from tests.fixtures.celery import EngineProcesses
from tests.kubesim.cluster.helpers import create_quota
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("bookstore_engine")]


@pytest.fixture
def bookstore_engine(engine: EngineProcesses) -> EngineProcesses:
    engine.controllers = "controllers.bookstore"
    worker = engine.start_worker(concurrency=2, wait=False)
    engine.start_watcher()
    engine.wait_worker_ready(worker)
    return engine


def _create(kube: ApiKube, namespace: str, name: str, **spec: Any) -> dict[str, Any]:
    body = {
        "apiVersion": BOOKSTORE.api_version,
        "kind": BOOKSTORE.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
    return kube.create(BOOKSTORE, body)


def _live(kube: ApiKube, namespace: str, labels: dict[str, str]) -> list[str]:
    pods = list_objects(kube, POD, namespace, labels)
    return sorted(
        p["metadata"]["name"] for p in pods if not deep_get(p, "metadata.deletionTimestamp")
    )


def _settled(kube: ApiKube, namespace: str, name: str, app: int, db: int) -> dict[str, Any] | None:
    """The CR once its status says: `app` and `db` ready pods, all named, Available, at rest."""
    cr = kube.get(BOOKSTORE, namespace, name)
    status = (cr or {}).get("status") or {}
    meta = {"metadata": {"name": name}}
    app_pods, db_pods = (
        _live(kube, namespace, app_labels(meta)),
        _live(kube, namespace, db_labels(meta)),
    )
    if (
        cr is not None
        and status.get("observedGeneration") == cr["metadata"]["generation"]
        and status.get("readyReplicas") == app
        and status.get("dbReadyReplicas") == db
        and len(app_pods) == app
        and len(db_pods) == db
        and status.get("nodes") == sorted(app_pods + db_pods)
        and len(status.get("claims") or []) >= db
        and condition_of(cr, "Available").get("status") == "True"
        and condition_of(cr, "Progressing").get("status") == "False"
    ):
        return cr
    return None


def _wait_settled(kube: ApiKube, namespace: str, name: str, app: int, db: int) -> dict[str, Any]:
    return wait_for(
        lambda: _settled(kube, namespace, name, app, db),
        timeout=60,
        what=f"{name} settled at app={app} db={db}",
    )


def test_create_makes_the_app_and_a_db_with_a_claim_per_replica(
    kube: ApiKube, namespace: str
) -> None:
    cr = _create(
        kube, namespace, "shop", bookApp={"replicas": 2}, bookDB={"replicas": 2, "dbSize": "2Gi"}
    )
    settled = _wait_settled(kube, namespace, "shop", 2, 2)
    uid = cr["metadata"]["uid"]
    deployment = kube.get(DEPLOYMENT, namespace, "shop-app")
    app_service = kube.get(SERVICE, namespace, "shop-app")
    statefulset = kube.get(STATEFULSET, namespace, "shop-db")
    db_service = kube.get(SERVICE, namespace, "shop-db")
    for child in (deployment, app_service, statefulset, db_service):
        assert child is not None
        assert child["metadata"]["ownerReferences"][0]["uid"] == uid
    assert db_service["spec"]["clusterIP"] == "None"
    env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "MONGODB_HOST", "value": "shop-db"} in env
    status = settled["status"]
    assert [c["name"] for c in status["claims"]] == ["data-shop-db-0", "data-shop-db-1"]
    assert {(c["requested"], c.get("capacity"), c["state"]) for c in status["claims"]} == {
        ("2Gi", "2Gi", "Bound")
    }
    assert status["nodePort"] == app_service["spec"]["ports"][0]["nodePort"]
    assert "shop-db-0" in status["nodes"] and "shop-db-1" in status["nodes"]


def test_scale_and_image_changes_converge(
    kube: ApiKube, namespace: str, kubesim_server: Any
) -> None:
    _create(kube, namespace, "shop", bookApp={"replicas": 1})
    _wait_settled(kube, namespace, "shop", 1, 1)
    scaled = kubectl(
        kubesim_server.kubeconfig_path, "scale", "-n", namespace, "bookstore/shop", "--replicas=3"
    )
    assert scaled.returncode == 0, scaled.stderr
    _wait_settled(kube, namespace, "shop", 3, 1)
    kube.patch(BOOKSTORE, namespace, "shop", {"spec": {"bookApp": {"image": "shop/app:2.0"}}})

    def rolled() -> dict[str, Any] | None:
        cr = _settled(kube, namespace, "shop", 3, 1)
        pods = list_objects(kube, POD, namespace, app_labels({"metadata": {"name": "shop"}}))
        images = {
            p["spec"]["containers"][0]["image"]
            for p in pods
            if not deep_get(p, "metadata.deletionTimestamp")
        }
        return cr if images == {"shop/app:2.0"} else None

    wait_for(rolled, timeout=60, what="the app pods to run shop/app:2.0")


def test_deleted_and_edited_children_are_put_back(kube: ApiKube, namespace: str) -> None:
    _create(kube, namespace, "shop")
    _wait_settled(kube, namespace, "shop", 1, 1)
    old = kube.get(STATEFULSET, namespace, "shop-db")
    assert old is not None
    kube.delete(STATEFULSET, namespace, "shop-db")
    kube.delete(SERVICE, namespace, "shop-db")
    kube.patch(DEPLOYMENT, namespace, "shop-app", {"spec": {"replicas": 4}})
    kube.patch(
        SERVICE,
        namespace,
        "shop-app",
        {"metadata": {"annotations": {"team": "books"}}, "spec": {"selector": {"app": "other"}}},
    )

    def healed() -> bool:
        sts = kube.get(STATEFULSET, namespace, "shop-db") or {"metadata": {}}
        deployment = kube.get(DEPLOYMENT, namespace, "shop-app")
        service = kube.get(SERVICE, namespace, "shop-app")
        return bool(
            sts["metadata"].get("uid") not in (None, old["metadata"]["uid"])
            and kube.get(SERVICE, namespace, "shop-db")
            and deep_get(deployment, "spec.replicas") == 1
            and deep_get(service, "spec.selector") == app_labels({"metadata": {"name": "shop"}})
        )

    wait_for(healed, timeout=60, what="the StatefulSet, DB Service, replicas and selector back")
    service = kube.get(SERVICE, namespace, "shop-app") or {}
    assert service["metadata"]["annotations"]["team"] == "books"  # not ours: kept
    _wait_settled(kube, namespace, "shop", 1, 1)


def test_raising_db_size_grows_the_claims_and_status_reports_their_capacity(
    kube: ApiKube, namespace: str
) -> None:
    _create(kube, namespace, "shop", bookDB={"replicas": 1, "dbSize": "1Gi"})
    _wait_settled(kube, namespace, "shop", 1, 1)
    kube.patch(BOOKSTORE, namespace, "shop", {"spec": {"bookDB": {"dbSize": "3Gi"}}})

    def pending() -> dict[str, Any] | None:
        cr = kube.get(BOOKSTORE, namespace, "shop")
        claims = deep_get(cr, "status.claims", [])
        progressing = condition_of(cr, "Progressing")
        if (
            deep_get(cr, "status.observedGeneration") == deep_get(cr, "metadata.generation")
            and claims
            and claims[0]["requested"] == "3Gi"
            and claims[0]["state"] == "FileSystemResizePending"
            and progressing.get("reason") == "VolumeResizing"
        ):
            return cr
        return None

    cr = wait_for(pending, timeout=60, what="the claim asking 3Gi, FileSystemResizePending")
    assert cr["status"]["claims"][0]["capacity"] == "1Gi"
    assert condition_of(cr, "Available").get("status") == "True"
    claim = kube.get(PVC, namespace, "data-shop-db-0") or {}
    assert deep_get(claim, "spec.resources.requests.storage") == "3Gi"
    # The StatefulSet's claim template is immutable: left as it was.
    sts = kube.get(STATEFULSET, namespace, "shop-db") or {}
    template = sts["spec"]["volumeClaimTemplates"][0]
    assert template["spec"]["resources"]["requests"]["storage"] == "1Gi"
    events = [
        e
        for e in list_objects(kube, EVENT, namespace)
        if e["involvedObject"].get("kind") == "BookStore" and e["reason"] == "ExpandingVolumes"
    ]
    assert len(events) == 1
    assert "data-shop-db-0 (1Gi)" in events[0]["message"]
    assert "keeps 1Gi in its volumeClaimTemplates" in events[0]["message"]

    # The file system grows when the pod mounting the claim starts again.
    kube.delete(POD, namespace, "shop-db-0")

    def grown() -> dict[str, Any] | None:
        cr = _settled(kube, namespace, "shop", 1, 1)
        claims = deep_get(cr, "status.claims", [])
        if claims and (claims[0].get("capacity"), claims[0]["state"]) == ("3Gi", "Bound"):
            return cr
        return None

    wait_for(grown, timeout=90, what="the claim's capacity of 3Gi in the CR's status")


def test_shrinking_db_size_is_refused_and_the_claims_are_kept(
    kube: ApiKube, namespace: str
) -> None:
    _create(kube, namespace, "shop", bookDB={"dbSize": "2Gi"})
    _wait_settled(kube, namespace, "shop", 1, 1)
    kube.patch(BOOKSTORE, namespace, "shop", {"spec": {"bookDB": {"dbSize": "1Gi"}}})

    def refused() -> dict[str, Any] | None:
        cr = kube.get(BOOKSTORE, namespace, "shop")
        degraded = condition_of(cr, "Degraded")
        generation = deep_get(cr, "metadata.generation")
        if degraded.get("reason") == "InvalidSpec" and degraded.get("observedGeneration") == (
            generation
        ):
            return cr
        return None

    cr = wait_for(refused, what="Degraded=True, InvalidSpec")
    message = condition_of(cr, "Degraded")["message"]
    assert "spec.bookDB.dbSize" in message and "cannot shrink" in message
    assert "data-shop-db-0 (2Gi)" in message
    claim = kube.get(PVC, namespace, "data-shop-db-0") or {}
    assert deep_get(claim, "spec.resources.requests.storage") == "2Gi"
    # Put back, the CR is served again.
    kube.patch(BOOKSTORE, namespace, "shop", {"spec": {"bookDB": {"dbSize": "2Gi"}}})
    wait_for(
        lambda: (
            condition_of(kube.get(BOOKSTORE, namespace, "shop"), "Degraded").get("status")
            == "False"
        ),
        what="Degraded=False again",
    )


def test_a_reconcile_of_a_settled_bookstore_writes_nothing(kube: ApiKube, namespace: str) -> None:
    _create(kube, namespace, "shop", bookApp={"replicas": 2})
    _wait_settled(kube, namespace, "shop", 2, 1)
    counting = CountingKube(kube)
    ctx = by_hand(CONTROLLER.name, namespace, "shop", kube, writes=counting)
    result = CONTROLLER.reconcile(ctx)
    assert counting.writes == []
    assert result.requeue_after is None


def test_a_db_size_the_storage_class_cannot_grow_is_degraded(kube: ApiKube, namespace: str) -> None:
    """A claim of a class without allowVolumeExpansion: the cluster answers 403, once."""
    name = f"fixed-{namespace}"
    # the default class's provisioner, so the cluster (kubesim or a real one) binds the claim
    default = kube.request("GET", "/apis/storage.k8s.io/v1/storageclasses/standard")
    storage_class = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": default["provisioner"],
        "allowVolumeExpansion": False,
    }
    kube.request("POST", "/apis/storage.k8s.io/v1/storageclasses", body=storage_class)
    try:
        _expansion_refused(kube, namespace, name)
    finally:
        kube.request("DELETE", f"/apis/storage.k8s.io/v1/storageclasses/{name}")


def _expansion_refused(kube: ApiKube, namespace: str, class_name: str) -> None:
    kube.create(PVC, db_claim(namespace, "1Gi", storage_class=class_name))
    _create(kube, namespace, "shop", bookDB={"dbSize": "1Gi"})
    _wait_settled(kube, namespace, "shop", 1, 1)
    kube.patch(BOOKSTORE, namespace, "shop", {"spec": {"bookDB": {"dbSize": "2Gi"}}})

    def refused() -> dict[str, Any] | None:
        cr = kube.get(BOOKSTORE, namespace, "shop")
        return cr if condition_of(cr, "Degraded").get("reason") == "VolumeExpansionFailed" else None

    cr = wait_for(refused, what="Degraded=True, VolumeExpansionFailed")
    message = condition_of(cr, "Degraded")["message"]
    assert "data-shop-db-0" in message and "2Gi" in message
    claim_now = kube.get(PVC, namespace, "data-shop-db-0") or {}
    assert deep_get(claim_now, "spec.resources.requests.storage") == "1Gi"
    # A run by hand is refused the same way: a Forbidden, which the engine retries slowly
    # (tests/diagnosis/test_volume_expansion.py: taken once the class allows expansion).
    with pytest.raises(PermanentError):
        CONTROLLER.reconcile(
            by_hand(CONTROLLER.name, namespace, "shop", kube, writes=CountingKube(kube))
        )


def test_a_db_image_that_does_not_exist_is_degraded_once_with_a_warning(
    kube: ApiKube, namespace: str
) -> None:
    _create(kube, namespace, "shop", bookDB={"image": "mongo:does-not-exist"})

    def degraded() -> dict[str, Any] | None:
        cr = kube.get(BOOKSTORE, namespace, "shop")
        return cr if condition_of(cr, "Degraded").get("reason") == "ImagePullFailed" else None

    cr = wait_for(degraded, what="Degraded=True, ImagePullFailed")
    assert condition_of(cr, "Degraded")["message"].startswith("DB: Image mongo:does-not-exist")
    assert condition_of(cr, "Available")["status"] == "False"
    warnings = wait_for(
        lambda: [
            e
            for e in list_objects(kube, EVENT, namespace)
            if e["involvedObject"].get("kind") == "BookStore" and e["reason"] == "ImagePullFailed"
        ],
        what="a Warning Event on the CR",
    )
    assert warnings[0]["type"] == "Warning"
    # Fixed, it comes back: the StatefulSet's rolling update would wait for ever on the pod
    # that never became ready, so the operator deletes it (Kubernetes' forced rollback).
    since = datetime.now(UTC)
    kube.patch(BOOKSTORE, namespace, "shop", {"spec": {"bookDB": {"image": "mongo:7.0"}}})
    _wait_settled(kube, namespace, "shop", 1, 1)
    actions = actions_since(Key(CONTROLLER.name, namespace, "shop"), since)
    assert any(a.startswith("Deleted Pod shop-db-0: stuck (") for a in actions), actions


def test_the_sample_applied_with_kubectl_settles(
    kube: ApiKube, namespace: str, kubesim_server: Any
) -> None:
    applied = kubectl(
        kubesim_server.kubeconfig_path,
        "apply", "-n", namespace, "-f", str(K8S / "samples" / "blog_v1alpha1_bookstore.yaml"),
    )  # fmt: skip
    assert applied.returncode == 0, applied.stderr
    cr = _wait_settled(kube, namespace, "bookstore-sample", 2, 1)
    assert cr["status"]["claims"][0]["capacity"] == "2Gi"
    listed = kubectl(kubesim_server.kubeconfig_path, "get", "opsboard", "-n", namespace)
    assert "bookstore-sample" in listed.stdout and "2Gi" in listed.stdout


def test_db_pods_a_quota_refuses_are_degraded_until_the_quota_is_raised(
    kube: ApiKube, namespace: str, kube_api_client: Any
) -> None:
    """A StatefulSet has no ReplicaFailure condition: its controller's FailedCreate Event,
    which the mirror keeps, is what tells the BookStore (and wakes it)."""
    core = client.CoreV1Api(kube_api_client)
    create_quota(core, namespace, {"pods": "2"})
    _create(kube, namespace, "s", bookApp={"replicas": 1}, bookDB={"replicas": 1})
    _wait_settled(kube, namespace, "s", 1, 1)
    kube.patch(BOOKSTORE, namespace, "s", {"spec": {"bookDB": {"replicas": 2}}})

    def degraded() -> dict[str, Any]:
        return condition_of(kube.get(BOOKSTORE, namespace, "s"), "Degraded")

    condition = wait_for(lambda: degraded().get("status") == "True" and degraded(),
                         what="Degraded=True")  # fmt: skip
    assert condition["reason"] == "PodsRefused"
    message = condition["message"]
    assert message.startswith("DB: StatefulSet s-db cannot create its pods (FailedCreate): ")
    assert 'pods "s-db-1" is forbidden: exceeded quota: q' in message
    assert f"Raise ResourceQuota q (kubectl -n {namespace} describe resourcequota q)" in message
    assert "spec.bookDB.replicas" in message

    core.patch_namespaced_resource_quota("q", namespace, {"spec": {"hard": {"pods": "3"}}})
    _wait_settled(kube, namespace, "s", 1, 2)
    wait_for(lambda: degraded().get("status") == "False", what="Degraded=False once created")
