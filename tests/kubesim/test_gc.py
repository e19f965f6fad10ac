"""Garbage collection: background, foreground and orphan propagation; namespace deletion."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from tests.kubesim.support import wait_for

Api = client.ApiClient


def _owner(api: Api, namespace: str, name: str, finalizers: list[str] | None = None) -> Any:
    body = {"metadata": {"name": name, "finalizers": finalizers or []}, "data": {}}
    return client.CoreV1Api(api).create_namespaced_config_map(namespace, body)


def _dependent(
    api: Api,
    namespace: str,
    name: str,
    owner: Any,
    *,
    block: bool = False,
    finalizers: list[str] | None = None,
) -> Any:
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": owner.metadata.name,
        "uid": owner.metadata.uid,
        "controller": True,
        "blockOwnerDeletion": block,
    }
    body = {
        "metadata": {"name": name, "ownerReferences": [ref], "finalizers": finalizers or []},
        "data": {},
    }
    return client.CoreV1Api(api).create_namespaced_config_map(namespace, body)


def _exists(api: Api, namespace: str, name: str) -> Any:
    try:
        return client.CoreV1Api(api).read_namespaced_config_map(name, namespace)
    except client.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def test_background_deletion_removes_dependents(kube_api_client: Api, namespace: str) -> None:
    owner = _owner(kube_api_client, namespace, "owner")
    _dependent(kube_api_client, namespace, "child", owner)
    client.CoreV1Api(kube_api_client).delete_namespaced_config_map(
        "owner", namespace, propagation_policy="Background"
    )
    assert _exists(kube_api_client, namespace, "owner") is None
    wait_for(
        lambda: _exists(kube_api_client, namespace, "child") is None,
        what="the dependent to be collected",
    )


def test_dependent_with_a_living_owner_stays(kube_api_client: Api, namespace: str) -> None:
    a = _owner(kube_api_client, namespace, "a")
    b = _owner(kube_api_client, namespace, "b")
    refs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": o.metadata.name, "uid": o.metadata.uid}
        for o in (a, b)
    ]
    client.CoreV1Api(kube_api_client).create_namespaced_config_map(
        namespace, {"metadata": {"name": "shared", "ownerReferences": refs}}
    )
    client.CoreV1Api(kube_api_client).delete_namespaced_config_map("a", namespace)

    def only_b() -> bool:
        obj = _exists(kube_api_client, namespace, "shared")
        return obj is not None and [r.name for r in obj.metadata.owner_references] == ["b"]

    wait_for(only_b, what="the reference to the deleted owner to be removed")


def test_foreground_deletion_waits_for_blocking_dependents(
    kube_api_client: Api, namespace: str
) -> None:
    core = client.CoreV1Api(kube_api_client)
    owner = _owner(kube_api_client, namespace, "fg")
    _dependent(
        kube_api_client, namespace, "held", owner, block=True, finalizers=["example.com/hold"]
    )
    core.delete_namespaced_config_map("fg", namespace, propagation_policy="Foreground")
    waiting = _exists(kube_api_client, namespace, "fg")
    assert waiting.metadata.deletion_timestamp is not None
    assert "foregroundDeletion" in waiting.metadata.finalizers
    wait_for(
        lambda: (
            (
                _exists(kube_api_client, namespace, "held") or client.V1ConfigMap()
            ).metadata.deletion_timestamp
        ),
        what="the dependent to be deleted",
    )
    assert _exists(kube_api_client, namespace, "fg") is not None
    core.patch_namespaced_config_map("held", namespace, {"metadata": {"finalizers": None}})
    wait_for(
        lambda: _exists(kube_api_client, namespace, "fg") is None,
        what="the owner to go once its dependents are gone",
    )


def test_orphan_deletion_strips_owner_references(kube_api_client: Api, namespace: str) -> None:
    owner = _owner(kube_api_client, namespace, "orph")
    _dependent(kube_api_client, namespace, "kept", owner)
    client.CoreV1Api(kube_api_client).delete_namespaced_config_map(
        "orph", namespace, propagation_policy="Orphan"
    )
    wait_for(lambda: _exists(kube_api_client, namespace, "orph") is None, what="the owner to go")
    kept = _exists(kube_api_client, namespace, "kept")
    assert kept is not None and not kept.metadata.owner_references


def test_deleting_a_deployment_removes_its_replicasets(
    kube_api_client: Api, namespace: str
) -> None:
    apps = client.AppsV1Api(kube_api_client)
    labels = {"app": "gc"}
    dep = apps.create_namespaced_deployment(
        namespace,
        {
            "metadata": {"name": "gc"},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
                },
            },
        },
    )
    ref = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "gc",
        "uid": dep.metadata.uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    rs = {
        "metadata": {"name": "gc-manual", "labels": labels, "ownerReferences": [ref]},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
            },
        },
    }
    apps.create_namespaced_replica_set(namespace, rs)
    apps.delete_namespaced_deployment("gc", namespace)
    wait_for(
        lambda: not apps.list_namespaced_replica_set(namespace).items,
        what="the ReplicaSets to be collected",
    )


def test_deleting_a_namespace_deletes_its_contents(kube_api_client: Api) -> None:
    core = client.CoreV1Api(kube_api_client)
    core.create_namespace({"metadata": {"name": "doomed-ns"}})
    core.create_namespaced_config_map("doomed-ns", {"metadata": {"name": "inside"}})
    terminating = core.delete_namespace("doomed-ns")
    assert terminating["status"]["phase"] == "Terminating"
    with_error = None
    try:
        core.create_namespaced_config_map("doomed-ns", {"metadata": {"name": "late"}})
    except client.ApiException as exc:
        with_error = exc
    if with_error is not None:  # the namespace may already be gone, which is a 404
        assert with_error.status in (403, 404)

    def gone() -> bool:
        try:
            core.read_namespace("doomed-ns")
        except client.ApiException as exc:
            return exc.status == 404
        return False

    wait_for(gone, what="the namespace to be removed")
    assert not core.list_config_map_for_all_namespaces(
        field_selector="metadata.namespace=doomed-ns"
    ).items
