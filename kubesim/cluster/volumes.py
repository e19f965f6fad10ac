"""Dynamic provisioning and expansion of PersistentVolumeClaims (a local-path style provisioner).

A claim of the default StorageClass "standard" gets a PersistentVolume of its
size and is bound at once. Raising the request of a bound claim grows the
volume and leaves the claim with FileSystemResizePending until a pod mounts it
again (the kubelet then finishes the resize and `status.capacity` grows).
"""

from __future__ import annotations

import copy

from kubesim.cluster.api import is_status_error
from kubesim.cluster.controller import Controller, Key, Obj, Watch, condition, is_deleting, key_of
from kubesim.cluster.quantity import parse_quantity
from kubesim.cluster.workloads import set_condition

STORAGE_CLASSES = "storageclasses.storage.k8s.io"
DEFAULT_CLASS = "standard"
PROVISIONER = "kubesim.io/hostpath"
COMPONENT = "persistentvolume-controller"
RESIZE_PENDING_MESSAGE = (
    "Waiting for user to (re-)start a pod to finish file system resize of volume on node."
)


class VolumeController(Controller):
    name = "volumes"

    def watches(self) -> dict[str, Watch]:
        return {"persistentvolumeclaims": self._claim_changed}

    def _claim_changed(self, old: Obj | None, new: Obj | None) -> None:
        if new is not None:
            self.enqueue(key_of(new))
        elif old is not None and (volume := old.get("spec", {}).get("volumeName")):
            self.enqueue(("", volume))  # a released volume of a deleted claim

    def resync(self) -> None:
        for pvc in self.ctx.cache.list("persistentvolumeclaims"):
            self.enqueue(key_of(pvc))

    def ensure_storage_class(self) -> None:
        storage_class = {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {
                "name": DEFAULT_CLASS,
                "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
            },
            "provisioner": PROVISIONER,
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "Immediate",
            "allowVolumeExpansion": True,
        }
        try:
            self.ctx.api.store.create(STORAGE_CLASSES, storage_class)
        except Exception as exc:
            if not is_status_error(exc, 409):
                raise

    def reconcile(self, key: Key) -> float | None:
        if not key[0]:
            return self._reclaim(key[1])
        pvc = self.ctx.cache.get("persistentvolumeclaims", *key)
        if pvc is None or is_deleting(pvc):
            return None
        if pvc.get("status", {}).get("phase") != "Bound":
            self._provision(pvc)
        else:
            self._expand(pvc)
        return None

    def _provision(self, pvc: Obj) -> None:
        spec, meta = pvc.get("spec") or {}, pvc["metadata"]
        class_name = spec.get("storageClassName", DEFAULT_CLASS)
        if class_name != DEFAULT_CLASS or spec.get("volumeName"):
            return  # another provisioner's claim, or a claim of a pre-made volume
        size = spec.get("resources", {}).get("requests", {}).get("storage", "1Gi")
        volume_name = f"pvc-{meta['uid']}"
        volume = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {
                "name": volume_name,
                "annotations": {"pv.kubernetes.io/provisioned-by": PROVISIONER},
            },
            "spec": {
                "capacity": {"storage": size},
                "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Delete",
                "storageClassName": class_name,
                "volumeMode": spec.get("volumeMode", "Filesystem"),
                "hostPath": {
                    "path": f"/var/local-path-provisioner/{volume_name}_{meta['namespace']}_{meta['name']}"
                },
                "claimRef": {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "namespace": meta["namespace"],
                    "name": meta["name"],
                    "uid": meta["uid"],
                },
            },
        }
        try:
            created = self.ctx.api.create("persistentvolumes", volume)
        except Exception as exc:
            if not is_status_error(exc, 409):
                raise
            created = self.ctx.api.refresh("persistentvolumes", None, volume_name)
        if created.get("status", {}).get("phase") != "Bound":
            self.ctx.api.update(
                "persistentvolumes", {**created, "status": {"phase": "Bound"}}, subresource="status"
            )
        body = copy.deepcopy(pvc)
        body["spec"]["volumeName"] = volume_name
        body["spec"].setdefault("storageClassName", class_name)
        annotations = body["metadata"].setdefault("annotations", {})
        annotations |= {
            "pv.kubernetes.io/bind-completed": "yes",
            "pv.kubernetes.io/bound-by-controller": "yes",
            "volume.beta.kubernetes.io/storage-provisioner": PROVISIONER,
            "volume.kubernetes.io/storage-provisioner": PROVISIONER,
        }
        bound = self.ctx.api.update("persistentvolumeclaims", body)
        status = {
            "phase": "Bound",
            "accessModes": volume["spec"]["accessModes"],
            "capacity": {"storage": size},
        }
        self.ctx.api.update(
            "persistentvolumeclaims", {**bound, "status": status}, subresource="status"
        )
        self.ctx.events.normal(
            pvc,
            "ProvisioningSucceeded",
            f"Successfully provisioned volume {volume_name}",
            f"{PROVISIONER}_kubesim",
        )

    def _expand(self, pvc: Obj) -> None:
        wanted = pvc.get("spec", {}).get("resources", {}).get("requests", {}).get("storage")
        have = pvc.get("status", {}).get("capacity", {}).get("storage")
        if not wanted or not have or parse_quantity(wanted) <= parse_quantity(have):
            return
        pending = condition(pvc, "FileSystemResizePending")
        if (
            pending is not None
            and (pvc["status"].get("allocatedResources") or {}).get("storage") == wanted
        ):
            return
        volume_name = pvc["spec"].get("volumeName")
        volume = self.ctx.cache.get("persistentvolumes", None, volume_name) if volume_name else None
        if volume is not None and volume["spec"].get("capacity", {}).get("storage") != wanted:
            body = copy.deepcopy(volume)
            body["spec"]["capacity"]["storage"] = wanted
            self.ctx.api.update("persistentvolumes", body)
        self.ctx.events.normal(
            pvc,
            "Resizing",
            f"External resizer is resizing volume {volume_name}",
            "external-resizer " + PROVISIONER,
        )
        status = copy.deepcopy(pvc["status"])
        status["allocatedResources"] = {"storage": wanted}
        status["conditions"] = set_condition(
            [c for c in status.get("conditions") or [] if c.get("type") != "Resizing"],
            {
                "type": "FileSystemResizePending",
                "status": "True",
                "lastProbeTime": None,
                "message": RESIZE_PENDING_MESSAGE,
            },
        )
        self.ctx.api.update(
            "persistentvolumeclaims", {**pvc, "status": status}, subresource="status"
        )
        self.ctx.events.normal(
            pvc,
            "FileSystemResizeRequired",
            "Require file system resize of volume on node",
            "external-resizer " + PROVISIONER,
        )

    def _reclaim(self, volume_name: str) -> None:
        """reclaimPolicy Delete: the volume of a deleted claim goes too."""
        volume = self.ctx.cache.get("persistentvolumes", None, volume_name)
        if volume is None or volume["spec"].get("persistentVolumeReclaimPolicy") != "Delete":
            return
        self.ctx.api.delete("persistentvolumes", None, volume_name)
