"""Reading nested fields of a plain-dict Kubernetes object."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def deep_get(body: Mapping[str, Any] | None, path: str, default: Any = None) -> Any:
    """`deep_get(obj, "spec.template.spec")`: a nested field, or `default` when absent."""
    value: Any = body
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return default
        value = value[part]
    return value
