"""The scale subresource: an autoscaling/v1 Scale view of a workload or custom resource."""

from __future__ import annotations

from typing import Any

from kubesim import errors, schema
from kubesim.errors import FieldError
from kubesim.jsonutil import clone
from kubesim.resources import ResourceType
from kubesim.selectors import selector_string

_META = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")


def scale_of(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    if not rt.scale:
        raise errors.resource_not_found()
    meta = obj["metadata"]
    scale: dict[str, Any] = {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in _META if k in meta},
        "spec": {"replicas": schema.get_path(obj, rt.spec_replicas_path) or 0},
        "status": {"replicas": schema.get_path(obj, rt.status_replicas_path) or 0},
    }
    if rt.crd:
        path = rt.label_selector_path
        selector = schema.get_path(obj, path) if path else None
    else:
        selector = selector_string((obj.get("spec") or {}).get("selector"))
    if selector:
        scale["status"]["selector"] = selector
    return scale


def scaled(rt: ResourceType, old: dict[str, Any], scale: dict[str, Any]) -> dict[str, Any]:
    """The object with the replicas a Scale asks for; 409 on a stale Scale, 422 on a bad one."""
    if not rt.scale:
        raise errors.resource_not_found()
    name = old["metadata"]["name"]
    rv = (scale.get("metadata") or {}).get("resourceVersion")
    if rv and rv != old["metadata"]["resourceVersion"]:
        raise errors.stale(rt.key, name)
    replicas = (scale.get("spec") or {}).get("replicas")
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        cause = FieldError(
            "Invalid", "spec.replicas", replicas, "must be greater than or equal to 0"
        )
        raise errors.invalid("Scale", "autoscaling", name, [cause])
    new: dict[str, Any] = clone(old)
    schema.set_path(new, rt.spec_replicas_path, replicas)
    return new
