"""An apply patch's body, read as kube-apiserver's applyPatcher reads it: decoded into a map,
then refused unless its apiVersion and kind are exactly those of the endpoint (the field
manager's version check, before the object's name or namespace are looked at), and unless
the kind has every field it sets (structured-merge-diff's typed patch); its repeated keys
are go-yaml's, checked once the apply is made."""

from __future__ import annotations

import re
from typing import Any

from kubesim import builtin_schema, errors
from kubesim.duplicates import Duplicates
from kubesim.gojson import compact
from kubesim.jsonutil import clone
from kubesim.managedfields import Shape

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


_SEGMENT = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]")


def check_typed(body: dict[str, Any], resource: str, group: str, version: str) -> None:
    """A built-in kind's apply that sets a field the kind does not have: the 500 of
    structured-merge-diff's typed patch, naming one such field (the server's is any one of
    them or all, as a Go map hands them out; kubesim's the first). The kind is named as Go's
    GroupVersionKind prints it: `/v1, Kind=ConfigMap` for the core group."""
    try:
        unknown = builtin_schema.prune(resource, clone(body))
    except builtin_schema.TypeMismatch:
        return  # a value of the wrong type: left to the decoding of the result
    if not unknown:
        return
    meta = body.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    named = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
    raise errors.unconverted(
        f"failed to create typed patch object ({named}; {group}/{version}, "
        f"Kind={body.get('kind')}): {_smd_path(body, unknown[0])}: field not declared in schema"
    )


def _smd_path(value: Any, dotted: str) -> str:
    """A field's path as structured-merge-diff prints it: an associative list's item by its
    keys (`containers[name="c"]`), a set's by its value, an atomic list's by its index."""
    out, shape = "", Shape("", None, None)
    for name, index in _SEGMENT.findall(dotted):
        if name or not index.isdigit():
            key = name or index
            out, shape = out + "." + key, shape.child(key)
            value = value.get(key) if isinstance(value, dict) else None
            continue
        keys = shape.list_keys()
        item = value[int(index)] if isinstance(value, list) and int(index) < len(value) else None
        if keys and isinstance(item, dict):
            out += (
                "[" + ",".join(f"{k}={compact(item[k])}" for k in sorted(keys) if k in item) + "]"
            )
        elif keys == ():
            out += f"[={compact(item)}]"
        else:
            out += f"[{index}]"
        value, shape = item, shape.item()
    return out


def check_repeated(
    found: Duplicates | None, validation: str | None, warnings: list[str] | None
) -> None:
    """The apply's repeated keys, once it is made: go-yaml's warnings, or its 400 under
    Strict (the body is YAML to the server, JSON too)."""
    if found is None or not found.yaml:
        return
    if validation == "Strict":
        raise errors.bad_request(
            "error strict decoding YAML: error converting YAML to JSON: "
            + found.issues([], strict=True)[0]
        )
    if validation != "Ignore" and warnings is not None:
        warnings.extend(found.issues([]))
