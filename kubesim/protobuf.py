"""Protobuf request bodies for the few simple kinds `kubectl create <generator>` sends.

kubectl's typed clients send `application/vnd.kubernetes.protobuf`: the `k8s\\0` magic, a
runtime.Unknown envelope, then the object in the field numbers of k8s.io/api's
generated.proto. kubesim decodes Namespace, ConfigMap, Secret and ServiceAccount this way
(so `kubectl create namespace|configmap|secret|serviceaccount` work); other kinds get 415.
"""

from __future__ import annotations

import base64
import datetime
from typing import Any

from kubesim import errors

MAGIC = b"k8s\x00"

# message -> field number -> (JSON name, type, repeated)
Field = tuple[str, str, bool]
MESSAGES: dict[str, dict[int, Field]] = {
    "Unknown": {
        1: ("typeMeta", "TypeMeta", False),
        2: ("raw", "bytes", False),
        3: ("contentEncoding", "string", False),
        4: ("contentType", "string", False),
    },
    "TypeMeta": {1: ("apiVersion", "string", False), 2: ("kind", "string", False)},
    "ObjectMeta": {
        1: ("name", "string", False),
        2: ("generateName", "string", False),
        3: ("namespace", "string", False),
        5: ("uid", "string", False),
        6: ("resourceVersion", "string", False),
        7: ("generation", "int", False),
        8: ("creationTimestamp", "Time", False),
        9: ("deletionTimestamp", "Time", False),
        10: ("deletionGracePeriodSeconds", "int", False),
        11: ("labels", "map<string,string>", False),
        12: ("annotations", "map<string,string>", False),
        13: ("ownerReferences", "OwnerReference", True),
        14: ("finalizers", "string", True),
    },
    "OwnerReference": {
        1: ("kind", "string", False),
        3: ("name", "string", False),
        4: ("uid", "string", False),
        5: ("apiVersion", "string", False),
        6: ("controller", "bool", False),
        7: ("blockOwnerDeletion", "bool", False),
    },
    "Time": {1: ("seconds", "int", False), 2: ("nanos", "int", False)},
    "ObjectReference": {
        1: ("kind", "string", False),
        2: ("namespace", "string", False),
        3: ("name", "string", False),
        4: ("uid", "string", False),
        5: ("apiVersion", "string", False),
        6: ("resourceVersion", "string", False),
        7: ("fieldPath", "string", False),
    },
    "LocalObjectReference": {1: ("name", "string", False)},
    "Namespace": {1: ("metadata", "ObjectMeta", False), 2: ("spec", "NamespaceSpec", False)},
    "NamespaceSpec": {1: ("finalizers", "string", True)},
    "ConfigMap": {
        1: ("metadata", "ObjectMeta", False),
        2: ("data", "map<string,string>", False),
        3: ("binaryData", "map<string,bytes>", False),
        4: ("immutable", "bool", False),
    },
    "Secret": {
        1: ("metadata", "ObjectMeta", False),
        2: ("data", "map<string,bytes>", False),
        3: ("type", "string", False),
        4: ("stringData", "map<string,string>", False),
        5: ("immutable", "bool", False),
    },
    "ServiceAccount": {
        1: ("metadata", "ObjectMeta", False),
        2: ("secrets", "ObjectReference", True),
        3: ("imagePullSecrets", "LocalObjectReference", True),
        4: ("automountServiceAccountToken", "bool", False),
    },
}
KINDS = {("v1", "Namespace"), ("v1", "ConfigMap"), ("v1", "Secret"), ("v1", "ServiceAccount")}


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    out: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            out.append((number, value))
        elif wire == 2:
            length, pos = _varint(data, pos)
            out.append((number, data[pos : pos + length]))
            pos += length
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
    return out


def _bytes(value: int | bytes) -> bytes:
    """A length-delimited field's bytes; a varint where bytes belong is a malformed body."""
    if not isinstance(value, bytes):
        raise ValueError("a varint where a length-delimited field was expected")
    return value


def _message(name: str, data: bytes) -> dict[str, Any]:
    schema = MESSAGES[name]
    obj: dict[str, Any] = {}
    for number, value in _fields(data):
        if number not in schema:
            continue
        key, kind, repeated = schema[number]
        if kind.startswith("map<"):
            entry = dict(_fields(_bytes(value)))
            raw_value = _bytes(entry.get(2, b""))
            mapped = (
                base64.b64encode(raw_value).decode()
                if kind.endswith("bytes>")
                else raw_value.decode()
            )
            obj.setdefault(key, {})[_bytes(entry.get(1, b"")).decode()] = mapped
            continue
        decoded = _scalar(kind, value)
        if decoded == "" and not repeated:  # Go's zero value: the field was not set
            continue
        if repeated:
            obj.setdefault(key, []).append(decoded)
        else:
            obj[key] = decoded
    return obj


def _scalar(kind: str, value: int | bytes) -> Any:
    if kind == "string":
        return _bytes(value).decode()
    if kind == "bytes":
        return _bytes(value)
    if kind == "bool":
        return bool(value)
    if kind == "int":
        return value
    if kind == "Time":
        t = _message("Time", _bytes(value))
        moment = datetime.datetime.fromtimestamp(t.get("seconds", 0), datetime.UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return _message(kind, _bytes(value))


def decode(body: bytes, accepted: list[str]) -> dict[str, Any]:
    """The JSON form of a protobuf-encoded object, or 415 for kinds kubesim cannot decode."""
    if not body.startswith(MAGIC):
        raise errors.bad_request("provided object is not a kubernetes protobuf message")
    try:
        envelope = _message("Unknown", body[len(MAGIC) :])
        type_meta = envelope.get("typeMeta") or {}
        api_version, kind = type_meta.get("apiVersion", ""), type_meta.get("kind", "")
        if (api_version, kind) not in KINDS:
            raise errors.unsupported_media(accepted)
        obj = _message(kind, envelope.get("raw", b""))
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"unable to decode protobuf body: {exc}") from None
    return {"apiVersion": api_version, "kind": kind, **obj}
