"""Reading nested fields of a plain-dict Kubernetes object."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def deep_get(body: Mapping[str, Any] | None, path: str, default: Any = None) -> Any:
    """`deep_get(obj, "spec.template.spec")`: a nested field, or `default` when absent."""
    value: Any = body
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return default
        value = value[part]
    return value


def node_port(service: Mapping[str, Any] | None, port_name: str) -> int | None:
    """The nodePort of the Service's port named `port_name`: a Service adopted from someone
    else may list other ports first."""
    for port in deep_get(service, "spec.ports", []) or []:
        if port.get("name") == port_name and port.get("nodePort") is not None:
            return int(port["nodePort"])
    return None


def controlling_ref(refs: Sequence[Mapping[str, Any]] | None) -> Any:
    """Of an object's ownerReferences, its controller's (there is at most one), or None."""
    return next((ref for ref in refs or [] if ref.get("controller")), None)
