"""Plain-dict Ptemplates, DaemonSets and pods for the Ptemplate tests, and the KMM CRD install."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from controllers.base import Kind
from controllers.kube import ApiKube
from controllers.ptemplate.desired import SECRET
from tests.controllers.manifests import K8S

NODE = Kind("", "v1", "Node", "nodes", namespaced=False)

KMM_CRD_FILES = sorted((K8S / "third_party").glob("*/*.yaml"))

SPEC: dict[str, Any] = {
    "nodeSelector": {"node-role.kubernetes.io/worker": ""},
    "imagePullSecret": "pull",
    "moduleName": "accel_drv",
    "moduleLoaderImage": "quay.io/acme/accel-kmod:${KERNEL_FULL_VERSION}",
    "deviceResource": "acme.com/accel",
    "deviceCount": 2,
    "image": "quay.io/acme/accel-consumer:1.0",
}


def ptemplate(name: str = "pt", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "hwe.example.com/v1alpha1",
        "kind": "Ptemplate",
        "metadata": {
            "name": name,
            "namespace": "shop",
            "uid": f"uid-{name}",
            "generation": 2,
            "resourceVersion": "10",
        },
        "spec": {**SPEC, **spec},
    }


def daemonset(desired: int | None, ready: int = 0, updated: int | None = None) -> dict[str, Any]:
    """A DaemonSet whose controller has counted (`desired` not None) or not yet."""
    ds: dict[str, Any] = {"metadata": {"name": "pt-consumer", "generation": 1}, "status": {}}
    if desired is not None:
        ds["status"] = {
            "observedGeneration": 1,
            "desiredNumberScheduled": desired,
            "numberReady": ready,
            "updatedNumberScheduled": desired if updated is None else updated,
        }
    return ds


def pending_pod(name: str, message: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {"containers": [{"name": "consumer", "image": SPEC["image"]}]},
        "status": {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": message,
                }
            ],
        },
    }


def install_kmm_crd(kubeconfig: str | Path) -> None:
    """As `make run` does: KMM's Module CRD, only where the cluster does not serve it."""
    from controllers.kube import load_api_client
    from opsboard.core import manifests

    api = load_api_client(kubeconfig=str(kubeconfig))
    try:
        manifests.install_missing(api, manifests.documents(KMM_CRD_FILES))
    finally:
        api.close()


def advertise(kube: ApiKube, resource: str, count: int | None) -> None:
    """What a device plugin's registration does to each node's status (None: withdraw)."""
    nodes, _ = kube.list(NODE)
    value = None if count is None else str(count)
    for node in nodes:
        patch = {"capacity": {resource: value}, "allocatable": {resource: value}}
        kube.patch_status(NODE, "", node["metadata"]["name"], patch)


def make_secret(kube: ApiKube, namespace: str, name: str = "pull") -> None:
    kube.create(
        SECRET,
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name, "namespace": namespace},
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": "eyJhdXRocyI6IHt9fQ=="},
        },
    )
