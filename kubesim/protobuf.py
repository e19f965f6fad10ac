"""Protobuf request bodies, as kubectl's typed clients send them for built-in kinds.

`application/vnd.kubernetes.protobuf` is the `k8s\\0` magic, a runtime.Unknown envelope
naming apiVersion and kind, then the object in the field numbers of k8s.io/api's
generated.proto. `protobuf_schema.json` (written by `python -m kubesim.protobuf_gen` from a
Kubernetes source tree) holds those numbers, the JSON name of each field, and whether Go
marshals its zero value; this module turns a body into the JSON form the rest of kubesim
handles. Answers stay JSON, which every client that sends protobuf also accepts.
"""

from __future__ import annotations

import base64
import datetime
import json
import struct
from functools import cache
from pathlib import Path
from typing import Any

from kubesim import errors

MAGIC = b"k8s\x00"
META = "k8s.io.apimachinery.pkg.apis.meta.v1"
_RUNTIME = "k8s.io.apimachinery.pkg.runtime"
REPEATED, KEEP_ZERO = 1, 2  # Field flags: a list; Go marshals its zero value
# Groups whose Go package is not the group's first label.
_PACKAGES = {"rbac.authorization.k8s.io": "rbac", "meta.k8s.io": "meta"}

Field = tuple[str, str, int]  # JSON name, type, flags
Wire = tuple[int, int, "int | bytes"]  # field number, wire type, value


@cache
def schema() -> dict[str, dict[int, Field]]:
    raw = json.loads(Path(__file__).with_name("protobuf_schema.json").read_text())
    return {
        name: {int(n): (f[0], f[1], int(f[2])) for n, f in fields.items()}
        for name, fields in raw.items()
    }


def message_for(api_version: str, kind: str) -> str | None:
    """The protobuf message of a kind, e.g. ("apps/v1", "Deployment") -> k8s.io.api.apps.v1.Deployment."""
    group, _, version = api_version.rpartition("/")
    package = _PACKAGES.get(group) or (group.split(".")[0] if group else "core")
    name = f"{META}.{kind}" if package == "meta" else f"k8s.io.api.{package}.{version}.{kind}"
    return name if name in schema() else None


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


def _fields(data: bytes) -> list[Wire]:
    out: list[Wire] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            out.append((number, wire, value))
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise ValueError("truncated length-delimited field")
            out.append((number, wire, data[pos : pos + length]))
            pos += length
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            out.append((number, wire, data[pos : pos + size]))
            pos += size
        else:
            raise ValueError(f"unsupported wire type {wire}")
    return out


def _bytes(value: int | bytes) -> bytes:
    """A length-delimited field's bytes; a varint where bytes belong is a malformed body."""
    if not isinstance(value, bytes):
        raise ValueError("a varint where a length-delimited field was expected")
    return value


def _int(value: int | bytes) -> int:
    if not isinstance(value, int):
        raise ValueError("bytes where a varint was expected")
    return value - (1 << 64) if value >= 1 << 63 else value  # negative int32/int64


def _time(data: bytes) -> str | None:
    fields = {n: _int(v) for n, _, v in _fields(data)}
    if not fields.get(1) and not fields.get(2):
        return None  # Go's zero Time marshals as null
    moment = datetime.datetime.fromtimestamp(fields.get(1, 0), datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _special(kind: str, data: bytes) -> tuple[bool, Any]:
    """(handled, value) for the messages whose JSON form is not an object of their fields."""
    if kind in (f"{META}.Time", f"{META}.MicroTime"):
        return True, _time(data)
    if kind == "k8s.io.apimachinery.pkg.util.intstr.IntOrString":
        f = {n: v for n, _, v in _fields(data)}
        if _int(f.get(1, 0)) == 1:
            return True, _bytes(f.get(3, b"")).decode()
        return True, _int(f.get(2, 0))
    if kind == "k8s.io.apimachinery.pkg.api.resource.Quantity":
        f = {n: v for n, _, v in _fields(data)}
        return True, _bytes(f.get(1, b"")).decode()
    if kind in (f"{META}.FieldsV1", f"{_RUNTIME}.RawExtension"):
        f = {n: v for n, _, v in _fields(data)}
        raw = _bytes(f.get(1, b""))
        return True, json.loads(raw) if raw else None
    if kind == f"{META}.Duration":
        f = {n: v for n, _, v in _fields(data)}
        return True, f"{_int(f.get(1, 0)) / 1e9:g}s"
    return False, None


def _scalar(kind: str, wire: int, value: int | bytes) -> Any:
    if kind == "string":
        return _bytes(value).decode()
    if kind == "bytes":
        return base64.b64encode(_bytes(value)).decode()
    if kind == "bool":
        return bool(_int(value))
    if kind == "int":
        return _int(value)
    if kind in ("double", "float"):
        raw = _bytes(value)
        return struct.unpack("<d" if wire == 1 else "<f", raw)[0]
    return _decode_message(kind, _bytes(value))


def _zero(value: Any) -> bool:
    return value in ("", 0, False, None) and not isinstance(value, dict)


def _map_entry(kind: str, data: bytes) -> tuple[str, Any]:
    _, key_type, value_type = kind.split(":", 2)
    entry = {n: (w, v) for n, w, v in _fields(data)}
    key = _scalar(key_type, *entry.get(1, (2, b"")))
    value = _scalar(value_type, *entry.get(2, (2, b"")))
    return str(key), value


def _decode_message(name: str, data: bytes) -> Any:
    handled, value = _special(name, data)
    if handled:
        return value
    fields = schema().get(name)
    if fields is None:
        raise ValueError(f"no protobuf schema for {name}")
    obj: dict[str, Any] = {}
    for number, wire, raw in _fields(data):
        if number not in fields:
            continue
        key, kind, flags = fields[number]
        if kind.startswith("map:"):
            k, v = _map_entry(kind, _bytes(raw))
            obj.setdefault(key, {})[k] = v
            continue
        if flags & REPEATED:
            items = obj.setdefault(key, [])
            if wire == 2 and kind in ("int", "bool"):  # packed scalars
                data_ = _bytes(raw)
                pos = 0
                while pos < len(data_):
                    item, pos = _varint(data_, pos)
                    items.append(_scalar(kind, 0, item))
            else:
                items.append(_scalar(kind, wire, raw))
            continue
        decoded = _scalar(kind, wire, raw)
        if decoded is None or (_zero(decoded) and not flags & KEEP_ZERO):
            continue  # Go's zero value of an omitempty field: JSON would not carry it
        obj[key] = decoded
    return obj


def decode(body: bytes, accepted: list[str]) -> dict[str, Any]:
    """The JSON form of a protobuf-encoded object, or 415 for kinds kubesim cannot decode."""
    if not body.startswith(MAGIC):
        raise errors.bad_request("provided object is not a kubernetes protobuf message")
    try:
        envelope = {n: v for n, _, v in _fields(body[len(MAGIC) :])}
        type_meta = {n: _bytes(v).decode() for n, _, v in _fields(_bytes(envelope.get(1, b"")))}
        api_version, kind = type_meta.get(1, ""), type_meta.get(2, "")
        name = message_for(api_version, kind)
        if name is None:
            raise errors.unsupported_media(accepted)
        obj = _decode_message(name, _bytes(envelope.get(2, b"")))
    except (ValueError, UnicodeDecodeError, struct.error) as exc:
        raise errors.bad_request(f"unable to decode protobuf body: {exc}") from None
    return {"apiVersion": api_version, "kind": kind, **obj}
