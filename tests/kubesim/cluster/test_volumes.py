"""Claims without a StatefulSet: provisioning, resize admission, reclaim."""

from __future__ import annotations

import pytest
from kubernetes import client

from tests.kubesim.cluster.helpers import wait_for


def claim(name: str, size: str = "1Gi", storage_class: str | None = None) -> dict:
    spec: dict = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
    if storage_class:
        spec["storageClassName"] = storage_class
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": spec,
    }


def bound(
    core: client.CoreV1Api, namespace: str, name: str
) -> client.V1PersistentVolumeClaim | None:
    c = core.read_namespaced_persistent_volume_claim(name, namespace)
    return c if c.status.phase == "Bound" else None


@pytest.mark.kubesim_only  # real default classes often bind only once a pod uses the claim
def test_a_claim_gets_the_default_class_and_a_bound_volume(core, namespace):
    created = core.create_namespaced_persistent_volume_claim(namespace, claim("data"))

    assert created.spec.storage_class_name == "standard"
    c = wait_for(lambda: bound(core, namespace, "data"), what="Bound")
    volume = core.read_persistent_volume(c.spec.volume_name)
    assert volume.spec.capacity["storage"] == "1Gi"
    assert (volume.spec.claim_ref.namespace, volume.spec.claim_ref.name) == (namespace, "data")
    assert volume.status.phase == "Bound"


@pytest.mark.kubesim_only
def test_deleting_a_claim_deletes_its_volume(core, namespace):
    core.create_namespaced_persistent_volume_claim(namespace, claim("data"))
    volume_name = wait_for(lambda: bound(core, namespace, "data"), what="Bound").spec.volume_name

    core.delete_namespaced_persistent_volume_claim("data", namespace)

    def gone() -> bool:
        try:
            core.read_persistent_volume(volume_name)
        except client.ApiException as exc:
            return exc.status == 404
        return False

    wait_for(gone, what="the volume reclaimed")


@pytest.mark.kubesim_only
def test_a_claim_cannot_shrink(core, namespace):
    core.create_namespaced_persistent_volume_claim(namespace, claim("data", "2Gi"))
    wait_for(lambda: bound(core, namespace, "data"), what="Bound")

    with pytest.raises(client.ApiException) as err:
        core.patch_namespaced_persistent_volume_claim(
            "data", namespace, {"spec": {"resources": {"requests": {"storage": "1Gi"}}}}
        )

    assert err.value.status == 422
    assert (
        "spec.resources.requests.storage: Forbidden: field can not be less than previous value"
        in err.value.body
    )


@pytest.mark.kubesim_only
def test_a_class_without_expansion_refuses_a_resize(core, namespace, kube_api_client):
    storage = client.StorageV1Api(kube_api_client)
    fixed = f"fixed-{namespace}"
    storage.create_storage_class(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": fixed},
            "provisioner": "kubesim.io/hostpath",
        }
    )
    try:
        core.create_namespaced_persistent_volume_claim(
            namespace, claim("data", storage_class=fixed)
        )
        wait_for(lambda: bound(core, namespace, "data"), what="Bound")

        with pytest.raises(client.ApiException) as err:
            core.patch_namespaced_persistent_volume_claim(
                "data", namespace, {"spec": {"resources": {"requests": {"storage": "5Gi"}}}}
            )

        assert err.value.status == 403
        assert "storageclass that provisions the pvc must support resize" in err.value.body
    finally:
        storage.delete_storage_class(fixed)


def test_a_claim_not_bound_cannot_grow(core, namespace, kube_api_client):
    storage = client.StorageV1Api(kube_api_client)
    unserved = f"unserved-{namespace}"  # no provisioner serves it: its claims stay Pending
    storage.create_storage_class(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": unserved},
            "provisioner": "example.com/nobody",
            "allowVolumeExpansion": True,
        }
    )
    try:
        core.create_namespaced_persistent_volume_claim(
            namespace, claim("data", storage_class=unserved)
        )

        with pytest.raises(client.ApiException) as err:
            core.patch_namespaced_persistent_volume_claim(
                "data", namespace, {"spec": {"resources": {"requests": {"storage": "5Gi"}}}}
            )

        assert err.value.status == 422
        assert (
            'PersistentVolumeClaim \\"data\\" is invalid: spec: Forbidden: spec is immutable '
            "after creation except resources.requests for bound claims" in err.value.body
        )
        now = core.read_namespaced_persistent_volume_claim("data", namespace)
        assert now.status.phase == "Pending"
        assert now.spec.resources.requests["storage"] == "1Gi"
    finally:
        storage.delete_storage_class(unserved)
