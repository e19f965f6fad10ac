"""What a DELETE answers, per resource, as kube-apiserver's registries do.

Stores with ReturnDeletedObject (pods, services, service accounts, volumes, claims, storage
classes, custom resources) answer the deleted object; the others a Success Status naming
what went. A delete that is still pending (a finalizer, a pod's grace period) answers the
object with its deletionTimestamp on every store. The official client deserializes the
answer by the type its OpenAPI document gives, so a wrong shape fails these calls.
"""

from __future__ import annotations

from kubernetes import client

from tests.kubesim.support import wait_for

Api = client.ApiClient


def _service(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"selector": {"app": name}, "ports": [{"port": 80}]},
    }


def _pod(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]},
    }


def _deployment(name: str, **meta: object) -> dict:
    labels = {"app": name}
    return {
        "metadata": {"name": name, **meta},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]},
            },
        },
    }


def test_deleting_a_service_answers_the_service(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    created = core.create_namespaced_service(namespace, _service("web"))

    deleted = core.delete_namespaced_service("web", namespace)

    assert isinstance(deleted, client.V1Service)
    assert deleted.metadata.uid == created.metadata.uid
    assert deleted.spec.cluster_ip == created.spec.cluster_ip


def test_a_dry_run_service_delete_answers_the_service_and_keeps_it(
    kube_api_client: Api, namespace: str
) -> None:
    core = client.CoreV1Api(kube_api_client)
    created = core.create_namespaced_service(namespace, _service("kept"))

    deleted = core.delete_namespaced_service("kept", namespace, dry_run="All")

    assert isinstance(deleted, client.V1Service)
    assert deleted.metadata.uid == created.metadata.uid
    assert core.read_namespaced_service("kept", namespace).metadata.uid == created.metadata.uid


def test_deleting_a_service_account_answers_the_service_account(
    kube_api_client: Api, namespace: str
) -> None:
    core = client.CoreV1Api(kube_api_client)
    body = {"metadata": {"name": "robot"}}
    created = core.create_namespaced_service_account(namespace, body)

    deleted = core.delete_namespaced_service_account("robot", namespace)

    assert isinstance(deleted, client.V1ServiceAccount)
    assert deleted.metadata.uid == created.metadata.uid


def test_deleting_a_configmap_answers_a_success_status(
    kube_api_client: Api, namespace: str
) -> None:
    core = client.CoreV1Api(kube_api_client)
    body = {"metadata": {"name": "plain"}, "data": {"k": "v"}}
    created = core.create_namespaced_config_map(namespace, body)

    status = core.delete_namespaced_config_map("plain", namespace)

    assert status["kind"] == "Status" and status["status"] == "Success"
    assert status["details"] == {
        "name": "plain",
        "kind": "configmaps",
        "uid": created.metadata.uid,
    }


def test_deleting_a_deployment_names_its_group_in_the_status(
    kube_api_client: Api, namespace: str
) -> None:
    apps = client.AppsV1Api(kube_api_client)
    apps.create_namespaced_deployment(namespace, _deployment("gone"))

    status = apps.delete_namespaced_deployment("gone", namespace)

    assert status["status"] == "Success"
    assert status["details"]["group"] == "apps"
    assert status["details"]["kind"] == "deployments"


def test_a_delete_held_by_a_finalizer_answers_the_object(
    kube_api_client: Api, namespace: str
) -> None:
    core = client.CoreV1Api(kube_api_client)
    body = {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}
    core.create_namespaced_config_map(namespace, body)

    pending = core.delete_namespaced_config_map("held", namespace)

    assert pending["kind"] == "ConfigMap"
    assert pending["metadata"]["deletionTimestamp"]
    assert pending["metadata"]["finalizers"] == ["example.com/hold"]
    core.patch_namespaced_config_map("held", namespace, {"metadata": {"finalizers": None}})


def test_a_graceful_pod_delete_answers_the_pod_with_its_deletion_timestamp(
    kube_api_client: Api, namespace: str
) -> None:
    core = client.CoreV1Api(kube_api_client)
    core.create_namespaced_pod(namespace, _pod("slow"))
    wait_for(
        lambda: core.read_namespaced_pod("slow", namespace).spec.node_name,
        timeout=30,
        what="the pod to be scheduled",
    )

    deleted = core.delete_namespaced_pod("slow", namespace, grace_period_seconds=30)

    assert isinstance(deleted, client.V1Pod)
    assert deleted.metadata.deletion_timestamp is not None
    assert deleted.metadata.deletion_grace_period_seconds == 30


def test_a_held_delete_counts_as_a_change_of_generation_once(
    kube_api_client: Api, namespace: str
) -> None:
    """kube-apiserver raises a generation-tracking object's generation when it marks it as
    deleting, so its controller's observedGeneration falls behind; not again on a second
    delete, and never on an object without a generation."""
    apps, core = client.AppsV1Api(kube_api_client), client.CoreV1Api(kube_api_client)
    apps.create_namespaced_deployment(
        namespace, _deployment("held", finalizers=["example.com/hold"])
    )
    core.create_namespaced_config_map(
        namespace, {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}
    )

    first = apps.delete_namespaced_deployment("held", namespace)
    again = apps.delete_namespaced_deployment("held", namespace)
    config_map = core.delete_namespaced_config_map("held", namespace)

    assert (first["metadata"]["generation"], again["metadata"]["generation"]) == (2, 2)
    assert "generation" not in config_map["metadata"]
    unhold = {"metadata": {"finalizers": None}}
    apps.patch_namespaced_deployment("held", namespace, unhold)
    core.patch_namespaced_config_map("held", namespace, unhold)
