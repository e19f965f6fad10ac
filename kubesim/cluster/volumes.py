"""Dynamic provisioning and expansion of PersistentVolumeClaims (a local-path style provisioner).

A claim of the default StorageClass "standard" gets a PersistentVolume of its
size and is bound at once. Raising the request of a bound claim grows the
volume and leaves the claim with FileSystemResizePending until a pod mounts it
again (the kubelet then finishes the resize and `status.capacity` grows).
"""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

from kubesim.cluster.api import is_status_error
from kubesim.cluster.controller import Controller, Key, Obj, Watch, condition, is_deleting, key_of
from kubesim.cluster.workloads import set_condition
from kubesim.errors import FieldError, forbidden, invalid
from kubesim.quantity import parse_quantity

STORAGE_CLASSES = "storageclasses.storage.k8s.io"
DEFAULT_CLASS = "standard"
PROVISIONER = "kubesim.io/hostpath"
COMPONENT = "persistentvolume-controller"
CLAIM_PROTECTION = "kubernetes.io/pvc-protection"
VOLUME_PROTECTION = "kubernetes.io/pv-protection"
RESIZE_PENDING_MESSAGE = (
    "Waiting for user to (re-)start a pod to finish file system resize of volume on node."
)


class VolumeController(Controller[Key]):
    name = "volumes"

    def watches(self) -> dict[str, Watch]:
        return {
            "persistentvolumeclaims": self._claim_changed,
            "persistentvolumes": self._volume_changed,
            "pods": self._pod_changed,
        }

    def _volume_changed(self, old: Obj | None, new: Obj | None) -> None:
        if new is not None and is_deleting(new):
            self.enqueue(("", new["metadata"]["name"]))

    def _pod_changed(self, old: Obj | None, new: Obj | None) -> None:
        """A pod that goes may release a claim that waits on pvc-protection."""
        if new is None and old is not None:
            for claim in claims_of(old):
                self.enqueue((old["metadata"]["namespace"], claim))

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
            self._reclaim(key[1])
            return None
        pvc = self.ctx.cache.get("persistentvolumeclaims", *key)
        if pvc is None:
            return None
        if is_deleting(pvc):
            self._release_claim(pvc)
            return None
        if pvc.get("status", {}).get("phase") != "Bound":
            self._provision(pvc)
        else:
            self._expand(pvc)
        return None

    def _provision(self, pvc: Obj) -> None:
        spec, meta = pvc.get("spec") or {}, pvc["metadata"]
        class_name = spec.get("storageClassName", DEFAULT_CLASS)
        if spec.get("volumeName") or self._provisioner(class_name) != PROVISIONER:
            return  # a claim of a pre-made volume, or another provisioner's claim
        size = spec.get("resources", {}).get("requests", {}).get("storage", "1Gi")
        volume_name = f"pvc-{meta['uid']}"
        volume: Obj = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {
                "name": volume_name,
                "annotations": {"pv.kubernetes.io/provisioned-by": PROVISIONER},
                "finalizers": [VOLUME_PROTECTION],
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
        status: Obj = {
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

    def _provisioner(self, class_name: str | None) -> str | None:
        if not class_name:
            return None
        try:
            storage_class = self.ctx.api.store.get(STORAGE_CLASSES, None, class_name)
            provisioner: str | None = storage_class.get("provisioner")
            return provisioner
        except Exception as exc:
            if is_status_error(exc, 404):
                return None
            raise

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

    def _release_claim(self, pvc: Obj) -> None:
        """pvc-protection: a claim in use by a pod stays until the pod is gone."""
        namespace, name = pvc["metadata"]["namespace"], pvc["metadata"]["name"]
        if any(name in claims_of(p) for p in self.ctx.cache.list("pods", namespace)):
            return
        self._drop_finalizer("persistentvolumeclaims", pvc, CLAIM_PROTECTION)

    def _reclaim(self, volume_name: str) -> None:
        """reclaimPolicy Delete: the volume of a deleted claim goes; pv-protection lets it."""
        volume = self.ctx.cache.get("persistentvolumes", None, volume_name)
        if volume is None or self._claim_exists(volume):
            return
        if is_deleting(volume):
            self._drop_finalizer("persistentvolumes", volume, VOLUME_PROTECTION)
        elif volume["spec"].get("persistentVolumeReclaimPolicy") == "Delete":
            self.ctx.api.delete("persistentvolumes", None, volume_name)

    def _claim_exists(self, volume: Obj) -> bool:
        ref = volume["spec"].get("claimRef") or {}
        claim = self.ctx.cache.get(
            "persistentvolumeclaims", ref.get("namespace"), ref.get("name", "")
        )
        return claim is not None and claim["metadata"].get("uid") == ref.get("uid")

    def _drop_finalizer(self, resource: str, obj: Obj, finalizer: str) -> None:
        finalizers = obj["metadata"].get("finalizers") or []
        if finalizer not in finalizers:
            return
        body = copy.deepcopy(obj)
        body["metadata"]["finalizers"] = [f for f in finalizers if f != finalizer]
        try:
            self.ctx.api.update(resource, body)
        except Exception as exc:
            if not is_status_error(exc, 404):
                raise


def claims_of(pod: Obj) -> set[str]:
    return {
        v["persistentVolumeClaim"]["claimName"]
        for v in pod.get("spec", {}).get("volumes") or []
        if (v.get("persistentVolumeClaim") or {}).get("claimName")
    }


class ClaimAdmission:
    """The DefaultStorageClass and PersistentVolumeClaimResize admission plugins."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def install(self) -> None:
        self.store.register_admission("persistentvolumeclaims", self.admit)

    def admit(self, op: str, new: Obj | None, old: Obj | None) -> None:
        if new is None:
            return
        spec = new.setdefault("spec", {})
        if op == "CREATE":
            if spec.get("storageClassName") is None and not spec.get("volumeName"):
                spec["storageClassName"] = DEFAULT_CLASS
            finalizers = new["metadata"].setdefault("finalizers", [])
            if CLAIM_PROTECTION not in finalizers:
                finalizers.append(CLAIM_PROTECTION)
        if op != "UPDATE" or old is None:
            return
        wanted, before = _request(new), _request(old)
        if wanted is None or before is None or wanted == before:
            return
        name = new["metadata"].get("name", "")
        if wanted < before:
            error = FieldError(
                "Forbidden",
                "spec.resources.requests.storage",
                detail="field can not be less than previous value",
            )
            raise invalid("PersistentVolumeClaim", "", name, [error])
        if old.get("status", {}).get("phase") != "Bound":
            # Validation's, before admission's "Only bound persistent volume claims can be
            # expanded" (kube-apiserver goes on with a diff of the two specs, left out here).
            error = FieldError(
                "Forbidden",
                "spec",
                detail="spec is immutable after creation except resources.requests for bound claims",
            )
            raise invalid("PersistentVolumeClaim", "", name, [error])
        if not self._expandable(spec.get("storageClassName"), old["spec"].get("storageClassName")):
            raise forbidden(
                "persistentvolumeclaims",
                name,
                "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
            )

    def _expandable(self, class_name: str | None, old_class_name: str | None) -> bool:
        """allowResize: the class named before and after, and it allows expansion."""
        if not class_name or class_name != old_class_name:
            return False
        try:
            storage_class = self.store.get(STORAGE_CLASSES, None, class_name)
        except Exception as exc:
            if is_status_error(exc, 404):
                return False
            raise
        return bool(storage_class.get("allowVolumeExpansion"))


def _request(claim: Obj) -> Decimal | None:
    value = claim.get("spec", {}).get("resources", {}).get("requests", {}).get("storage")
    try:
        return parse_quantity(value) if value is not None else None
    except ValueError:
        return None
