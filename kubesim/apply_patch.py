"""An apply patch's body, read as kube-apiserver's applyPatcher reads it: decoded into a map,
then refused unless its apiVersion and kind are exactly those of the endpoint (the field
manager's version check, before the object's name or namespace are looked at)."""

from __future__ import annotations

from typing import Any

from kubesim import errors

# Go's names for the JSON types a map cannot be decoded from
_JSON_TYPES = {bool: "bool", int: "number", float: "number", str: "string", list: "array"}


def applied_object(body: Any, group: str, version: str, kind: str) -> dict[str, Any]:
    """The apply configuration as a map; an empty or null body is an empty map."""
    if body is None:
        body = {}
    if not isinstance(body, dict):
        go_type = _JSON_TYPES.get(type(body), "object")
        raise errors.bad_request(
            "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot "
            f"unmarshal {go_type} into Go value of type map[string]interface {{}}"
        )
    sent = _group_version_kind(body)
    if sent != (group, version, kind):
        raise errors.bad_request(f"invalid object type: {sent[0]}/{sent[1]}, Kind={sent[2]}")
    return body


def _group_version_kind(body: dict[str, Any]) -> tuple[str, str, str]:
    """Unstructured.GroupVersionKind: a value that is not a string reads as empty, and an
    apiVersion ParseGroupVersion refuses (more than one "/") empties the kind as well."""
    api_version, kind = body.get("apiVersion"), body.get("kind")
    api_version = api_version if isinstance(api_version, str) else ""
    kind = kind if isinstance(kind, str) else ""
    if api_version in ("", "/"):
        return "", "", kind
    match api_version.count("/"):
        case 0:
            return "", api_version, kind
        case 1:
            group, version = api_version.split("/")
            return group, version, kind
        case _:
            return "", "", ""
