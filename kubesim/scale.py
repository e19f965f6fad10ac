"""The scale subresource: an autoscaling/v1 Scale view of a workload or custom resource."""

from __future__ import annotations

from typing import Any

from kubesim import errors, gojson, schema
from kubesim.errors import FieldError
from kubesim.jsonutil import clone
from kubesim.resources import ResourceType
from kubesim.selectors import selector_string

_META = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")


def scale_of(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    if not rt.scale:
        raise errors.resource_not_found()
    meta = obj["metadata"]
    replicas = schema.get_path(obj, rt.spec_replicas_path)
    scale: dict[str, Any] = {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in _META if k in meta},
        "spec": {"replicas": replicas} if replicas else {},  # omitempty
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
    if replicas is None:
        replicas = 0  # Go decodes a missing (omitempty) or null int32 as 0
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        cause = FieldError(
            "Invalid", "spec.replicas", replicas, "must be greater than or equal to 0"
        )
        raise errors.invalid("Scale", "autoscaling", name, [cause])
    new: dict[str, Any] = clone(old)
    schema.set_path(new, rt.spec_replicas_path, replicas)
    return new


_MAX_INT32 = 2**31 - 1


def replicas_errors(rt: ResourceType, obj: dict[str, Any], *, spec: bool) -> list[FieldError]:
    """The checks kube-apiserver's CR validator adds for a scale subresource's paths, after
    the schema's own: the spec path (unless only status is written), then the status path."""
    if not rt.crd or not rt.scale:
        return []
    paths = [rt.spec_replicas_path] if spec else []
    paths.append(rt.status_replicas_path)
    errs: list[FieldError] = []
    for path in paths:
        value, problem = _nested_int64(obj, path)
        if problem:
            errs.append(FieldError("Invalid", path, 0, problem))
        elif value < 0:
            errs.append(FieldError("Invalid", path, value, "should be a non-negative integer"))
        elif value > _MAX_INT32:
            errs.append(
                FieldError("Invalid", path, value, f"should be less than or equal to {_MAX_INT32}")
            )
    # A labelSelectorPath that holds no string is reported the same way (NestedString).
    selector_path = rt.label_selector_path
    if selector_path:
        _, problem = _nested(obj, selector_path, str, "string")
        if problem:
            errs.append(FieldError("Invalid", selector_path, "", problem))
    return errs


def _nested_int64(obj: dict[str, Any], path: str) -> tuple[int, str | None]:
    value, problem = _nested(obj, path, int, "int64")
    return (value if isinstance(value, int) else 0), problem


def _nested(obj: Any, path: str, want: type, go_type: str) -> tuple[Any, str | None]:
    """unstructured.NestedInt64/NestedString: a missing field is no error, a wrong type is,
    in Go's wording (`.spec.size accessor error: x is of the type string, expected int64`)."""
    fields = path.strip().lstrip(".").split(".")
    cur: Any = obj
    for i, name in enumerate(fields):
        if not isinstance(cur, dict):
            where = "." + ".".join(fields[: i + 1])
            return None, (
                f"{where} accessor error: {_go_value(cur)} is of the type {gojson.go_type(cur)}, "
                "expected map[string]interface {}"
            )
        if name not in cur:
            return None, None
        cur = cur[name]
    if isinstance(cur, want) and not isinstance(cur, bool):
        return cur, None
    where = "." + ".".join(fields)
    return None, (
        f"{where} accessor error: {_go_value(cur)} is of the type {gojson.go_type(cur)}, "
        f"expected {go_type}"
    )


def _go_value(value: Any) -> str:
    """fmt's %v of a decoded JSON value."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_value(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_value(v) for v in value) + "]"
    return str(value)
