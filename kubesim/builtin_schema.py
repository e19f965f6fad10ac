"""The fields of built-in kinds, read from the official client's generated models.

kube-apiserver decodes built-in objects into Go structs, so fields it does not know are
dropped (with a warning) or, under `fieldValidation=Strict`, rejected. kubesim does the
same by walking the object along the `openapi_types`/`attribute_map` of the kubernetes
client's models, which are generated from the same OpenAPI definitions.
"""

from __future__ import annotations

import functools
import importlib
import re
import threading
from typing import Any

MODELS = {
    "pods": "V1Pod",
    "services": "V1Service",
    "endpoints": "V1Endpoints",
    "configmaps": "V1ConfigMap",
    "secrets": "V1Secret",
    "events": "CoreV1Event",
    "namespaces": "V1Namespace",
    "nodes": "V1Node",
    "persistentvolumeclaims": "V1PersistentVolumeClaim",
    "persistentvolumes": "V1PersistentVolume",
    "serviceaccounts": "V1ServiceAccount",
    "deployments.apps": "V1Deployment",
    "replicasets.apps": "V1ReplicaSet",
    "statefulsets.apps": "V1StatefulSet",
    "daemonsets.apps": "V1DaemonSet",
    "controllerrevisions.apps": "V1ControllerRevision",
    "leases.coordination.k8s.io": "V1Lease",
    "events.events.k8s.io": "EventsV1Event",
    "endpointslices.discovery.k8s.io": "V1EndpointSlice",
    "storageclasses.storage.k8s.io": "V1StorageClass",
    "roles.rbac.authorization.k8s.io": "V1Role",
    "rolebindings.rbac.authorization.k8s.io": "V1RoleBinding",
    "clusterroles.rbac.authorization.k8s.io": "V1ClusterRole",
    "clusterrolebindings.rbac.authorization.k8s.io": "V1ClusterRoleBinding",
}
_LIST = re.compile(r"^List\[(.+)\]$")
_DICT = re.compile(r"^Dict\[str, (.+)\]$")
_import_lock = threading.Lock()


@functools.cache
def _models() -> Any:
    with _import_lock:
        return importlib.import_module("kubernetes.client.models")


def warm_up() -> None:
    """Import the models ahead of the first write (it takes about half a second)."""
    threading.Thread(target=_models, name="kubesim-models", daemon=True).start()


@functools.cache
def _fields(model: str) -> dict[str, str] | None:
    cls = getattr(_models(), model, None)
    types = getattr(cls, "openapi_types", None)
    names = getattr(cls, "attribute_map", None)
    if not isinstance(types, dict) or not isinstance(names, dict):
        return None
    return {names[k]: t for k, t in types.items() if k in names}


def prune(resource: str, obj: dict[str, Any]) -> list[str]:
    """Drop the fields the kind does not have; return their paths ("spec.foo")."""
    model = MODELS.get(resource)
    if model is None:
        return []
    unknown: list[str] = []
    _walk(model, obj, "", unknown)
    return unknown


def _walk(type_name: str, value: Any, path: str, unknown: list[str]) -> None:
    if m := _LIST.match(type_name):
        if isinstance(value, list):
            for i, item in enumerate(value):
                _walk(m.group(1), item, f"{path}[{i}]", unknown)
        return
    if m := _DICT.match(type_name):
        if isinstance(value, dict):
            for key, item in value.items():
                _walk(m.group(1), item, f"{path}[{key}]", unknown)
        return
    if not isinstance(value, dict):
        return
    fields = _fields(type_name) if type_name[:1].isupper() else None
    if fields is None:  # a primitive, "object" (int-or-string, raw JSON), or not a model
        return
    for key in list(value):
        sub = f"{path}.{key}" if path else key
        if key not in fields:
            unknown.append(sub)
            del value[key]
        else:
            _walk(fields[key], value[key], sub, unknown)
