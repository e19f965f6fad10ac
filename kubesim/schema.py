"""Structural schemas of CRDs: validation worded like kube-apiserver, pruning and defaulting.

Error texts follow k8s.io/kube-openapi/pkg/validation/errors as apiextensions-apiserver
turns them into field errors ("spec.size in body should be greater than or equal to 0").
"""

from __future__ import annotations

import copy
import datetime
import ipaddress
import re
import uuid
from typing import Any

from kubesim.errors import FieldError, GoLiteral

Schema = dict[str, Any]


def _num(n: float | int) -> str:
    return str(int(n)) if isinstance(n, float) and n.is_integer() else str(n)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _type_ok(expected: str, value: Any) -> bool:
    if expected == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if expected == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return _type_name(value) == expected


_FORMATS = {
    "date-time": lambda s: bool(datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))),
    "date": lambda s: bool(datetime.date.fromisoformat(s)),
    "uuid": lambda s: bool(uuid.UUID(s)),
    "ipv4": lambda s: isinstance(ipaddress.ip_address(s), ipaddress.IPv4Address),
    "ipv6": lambda s: isinstance(ipaddress.ip_address(s), ipaddress.IPv6Address),
    "email": lambda s: bool(re.match(r"^[^@\s]+@[^@\s]+\.[^@\s]+$", s)),
    "hostname": lambda s: bool(
        re.match(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$", s)
    ),
    "byte": lambda s: bool(re.match(r"^[A-Za-z0-9+/]*={0,2}$", s)) and len(s) % 4 == 0,
}


def _format_ok(fmt: str, value: str) -> bool:
    check = _FORMATS.get(fmt)
    if check is None:
        return True
    try:
        return check(value)
    except ValueError:
        return False


def validate(schema: Schema, value: Any, path: str, errors: list[FieldError]) -> None:
    """Validate `value` at `path` against `schema`, appending one error per bad field."""
    if value is None:
        if schema.get("nullable"):
            return
        if schema.get("type"):
            errors.append(
                FieldError(
                    "TypeInvalid",
                    path,
                    "null",
                    f'{path} in body must be of type {schema["type"]}: "null"',
                )
            )
        return
    if schema.get("x-kubernetes-int-or-string"):
        if not (isinstance(value, str) or _type_ok("integer", value)):
            errors.append(
                FieldError(
                    "TypeInvalid",
                    path,
                    _type_name(value),
                    f'{path} in body must be of type integer,string: "{_type_name(value)}"',
                )
            )
            return
    elif (t := schema.get("type")) and not _type_ok(t, value):
        actual = _type_name(value)
        errors.append(
            FieldError(
                "TypeInvalid", path, actual, f'{path} in body must be of type {t}: "{actual}"'
            )
        )
        return
    if "enum" in schema and value not in schema["enum"]:
        supported = ", ".join(_quote(v) for v in schema["enum"])
        errors.append(FieldError("Unsupported", path, value, f"supported values: {supported}"))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        _validate_number(schema, value, path, errors)
    elif isinstance(value, str):
        _validate_string(schema, value, path, errors)
    elif isinstance(value, list):
        _validate_array(schema, value, path, errors)
    elif isinstance(value, dict):
        _validate_object(schema, value, path, errors)
    for sub in schema.get("allOf") or []:
        validate(sub, value, path, errors)


def _quote(v: Any) -> str:
    return f'"{v}"' if isinstance(v, str) else _num(v) if isinstance(v, (int, float)) else str(v)


def _validate_number(schema: Schema, value: float, path: str, errors: list[FieldError]) -> None:
    if (m := schema.get("minimum")) is not None:
        if schema.get("exclusiveMinimum") and value <= m:
            errors.append(
                FieldError(
                    "Invalid", path, value, f"{path} in body should be greater than {_num(m)}"
                )
            )
        elif value < m:
            errors.append(
                FieldError(
                    "Invalid",
                    path,
                    value,
                    f"{path} in body should be greater than or equal to {_num(m)}",
                )
            )
    if (m := schema.get("maximum")) is not None:
        if schema.get("exclusiveMaximum") and value >= m:
            errors.append(
                FieldError("Invalid", path, value, f"{path} in body should be less than {_num(m)}")
            )
        elif value > m:
            errors.append(
                FieldError(
                    "Invalid",
                    path,
                    value,
                    f"{path} in body should be less than or equal to {_num(m)}",
                )
            )
    if (m := schema.get("multipleOf")) and value % m:
        errors.append(
            FieldError("Invalid", path, value, f"{path} in body should be a multiple of {_num(m)}")
        )


def _validate_string(schema: Schema, value: str, path: str, errors: list[FieldError]) -> None:
    if (n := schema.get("maxLength")) is not None and len(value) > n:
        errors.append(FieldError("TooLong", path, value, f"may not be longer than {n}"))
    if (n := schema.get("minLength")) is not None and len(value) < n:
        errors.append(
            FieldError("Invalid", path, value, f"{path} in body should be at least {n} chars long")
        )
    if (p := schema.get("pattern")) is not None and not re.search(p, value):
        errors.append(FieldError("Invalid", path, value, f"{path} in body should match '{p}'"))
    if (f := schema.get("format")) and not _format_ok(f, value):
        errors.append(
            FieldError("TypeInvalid", path, value, f'{path} in body must be of type {f}: "{value}"')
        )


def _validate_array(schema: Schema, value: list[Any], path: str, errors: list[FieldError]) -> None:
    if (n := schema.get("maxItems")) is not None and len(value) > n:
        errors.append(
            FieldError("TooMany", path, len(value), f"{len(value)}: must have at most {n} items")
        )
    if (n := schema.get("minItems")) is not None and len(value) < n:
        errors.append(
            FieldError("Invalid", path, value, f"{path} in body should have at least {n} items")
        )
    list_type = schema.get("x-kubernetes-list-type")
    if schema.get("uniqueItems") or list_type == "set":
        seen: list[Any] = []
        for i, v in enumerate(value):
            if v in seen:
                errors.append(FieldError("Duplicate", f"{path}[{i}]", v))
            seen.append(v)
    elif list_type == "map":
        keys = schema.get("x-kubernetes-list-map-keys") or []
        seen_keys: list[tuple[Any, ...]] = []
        for i, v in enumerate(value):
            if not isinstance(v, dict):
                continue
            key = tuple(v.get(k) for k in keys)
            if key in seen_keys:
                errors.append(FieldError("Duplicate", f"{path}[{i}]", _go_map(keys, key)))
            seen_keys.append(key)
    items = schema.get("items")
    if isinstance(items, dict):
        for i, v in enumerate(value):
            validate(items, v, f"{path}[{i}]", errors)


def _go_map(keys: list[str], values: tuple[Any, ...]) -> GoLiteral:
    """How kube-apiserver prints a list-map key: map[string]interface {}{"type":"Ready"}."""
    inner = ", ".join(f'"{k}":{_go_value(v)}' for k, v in zip(keys, values, strict=True))
    return GoLiteral(f"map[string]interface {{}}{{{inner}}}")


def _go_value(v: Any) -> str:
    return f'"{v}"' if isinstance(v, str) else "<nil>" if v is None else str(v)


def _validate_object(
    schema: Schema, value: dict[str, Any], path: str, errors: list[FieldError]
) -> None:
    props = schema.get("properties") or {}
    prefix = f"{path}." if path else ""
    for req in schema.get("required") or []:
        if req not in value:
            errors.append(FieldError("Required", prefix + req))
    if (n := schema.get("maxProperties")) is not None and len(value) > n:
        errors.append(
            FieldError("TooMany", path, len(value), f"{len(value)}: must have at most {n} items")
        )
    if (n := schema.get("minProperties")) is not None and len(value) < n:
        errors.append(
            FieldError(
                "Invalid", path, value, f"{path} in body should have at least {n} properties"
            )
        )
    extra = schema.get("additionalProperties")
    for k, v in value.items():
        if k in props:
            validate(props[k], v, prefix + k, errors)
        elif isinstance(extra, dict):
            validate(extra, v, prefix + k, errors)


def prune(schema: Schema, value: Any, path: str, unknown: list[str]) -> Any:
    """Drop fields the schema does not declare; record their paths in `unknown`."""
    if isinstance(value, dict):
        if schema.get("x-kubernetes-preserve-unknown-fields") and not schema.get("properties"):
            return value
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
        out = {}
        for k, v in value.items():
            sub_path = f"{path}.{k}" if path else k
            if props is not None and k in props:
                out[k] = prune(props[k], v, sub_path, unknown)
            elif isinstance(extra, dict):
                out[k] = prune(extra, v, sub_path, unknown)
            elif extra is True or preserve:
                out[k] = v
            else:
                unknown.append(sub_path)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [prune(schema["items"], v, f"{path}[{i}]", unknown) for i, v in enumerate(value)]
    return value


def apply_defaults(schema: Schema, value: Any) -> Any:
    if isinstance(value, dict):
        for k, sub in (schema.get("properties") or {}).items():
            if k not in value and "default" in sub:
                value[k] = copy.deepcopy(sub["default"])
            if k in value:
                value[k] = apply_defaults(sub, value[k])
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for k in list(value):
                value[k] = apply_defaults(extra, value[k])
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [apply_defaults(schema["items"], v) for v in value]
    return value


def process(
    schema: Schema | None, obj: dict[str, Any], *, status_only: bool = False
) -> tuple[dict[str, Any], list[str], list[FieldError]]:
    """Prune, default and validate a custom resource against its root schema.

    Returns the new object, the pruned field paths and the validation errors. apiVersion,
    kind and metadata are the server's business and never pruned. `status_only`: a write of
    the status subresource, which kube-apiserver validates against the status schema alone
    (apiextensions' statusStrategy), so a spec a tightened CRD now refuses does not stop
    its controller from reporting.
    """
    if not schema:
        return obj, [], []
    head = {k: obj[k] for k in ("apiVersion", "kind", "metadata") if k in obj}
    body = {k: v for k, v in obj.items() if k not in head}
    unknown: list[str] = []
    body = prune(schema, body, "", unknown)
    body = apply_defaults(schema, body)
    errors: list[FieldError] = []
    props = schema.get("properties") or {}
    for k, v in body.items():
        if k in props and (k == "status" or not status_only):
            validate(props[k], v, k, errors)
    for req in [] if status_only else schema.get("required") or []:
        if req not in body and req not in head:
            errors.append(FieldError("Required", req))
    return head | body, unknown, errors


def get_path(obj: Any, dotted: str) -> Any:
    """Read a simple JSONPath like `.spec.replicas` (what CRD scale paths and columns use)."""
    cur = obj
    for part in [p for p in dotted.strip().lstrip("$").split(".") if p]:
        m = re.match(r"^([^\[]*)((\[\d+\])*)$", part)
        name = m.group(1) if m else part
        if name:
            cur = cur.get(name) if isinstance(cur, dict) else None
        for idx in re.findall(r"\[(\d+)\]", m.group(2) if m else ""):
            cur = cur[int(idx)] if isinstance(cur, list) and int(idx) < len(cur) else None
        if cur is None:
            return None
    return cur


def set_path(obj: dict[str, Any], dotted: str, value: Any) -> None:
    parts = [p for p in dotted.strip().split(".") if p]
    cur = obj
    for p in parts[:-1]:
        cur = cur.setdefault(p, {})
    cur[parts[-1]] = value
