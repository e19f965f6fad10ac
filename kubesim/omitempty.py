"""Empty maps and lists that Go's encoding/json leaves out (`omitempty`), left out here too.

kube-apiserver decodes every write into Go structs and encodes them back, so `labels: {}`
or `volumes: []` never comes back from a real server: removing the last label leaves no
`labels` key, which is what `kubectl label` and any desired-vs-observed comparison see. A
custom resource keeps its own empty fields; only its metadata is ObjectMeta. Which fields
are omitempty comes from the Go struct tags, kept in protobuf_schema.json.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from kubesim import protobuf

OBJECT_META = f"{protobuf.META}.ObjectMeta"


def drop_empty(obj: dict[str, Any], *, custom: bool) -> None:
    """Removes, in place, the empty maps and lists Go would not serialise."""
    if custom:
        if isinstance(obj.get("metadata"), dict):
            _walk(obj["metadata"], OBJECT_META)
        return
    message = protobuf.message_for(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    if message is not None:
        _walk(obj, message)


@cache
def _fields(message: str) -> dict[str, tuple[str, int]]:
    return {name: (kind, flags) for name, kind, flags in protobuf.schema()[message].values()}


def _walk(obj: dict[str, Any], message: str) -> None:
    fields = _fields(message)
    for key in list(obj):
        if key not in fields:
            continue
        kind, flags = fields[key]
        value = obj[key]
        omitempty = not flags & protobuf.KEEP_ZERO
        container = kind.startswith("map:") or flags & protobuf.REPEATED
        if container and omitempty and value in ({}, []):
            del obj[key]
        elif kind in protobuf.schema():
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, dict):
                    _walk(item, kind)
