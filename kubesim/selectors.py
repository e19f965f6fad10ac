"""Label and field selectors with the syntax and errors of k8s.io/apimachinery."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kubesim.errors import bad_request

Matcher = Callable[[dict[str, Any]], bool]

_TOKEN = re.compile(r"\s*(!=|==|=|!|\(|\)|,|[^\s!=(),]+)")
_LABEL_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def _tokens(s: str) -> list[str]:
    out, pos = [], 0
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if not m:
            break
        if m.group(1):
            out.append(m.group(1))
        pos = m.end()
        if pos < len(s) and not s[pos:].strip():
            break
    return out


def _check_key(key: str) -> None:
    if not _LABEL_KEY.match(key) or len(key.rpartition("/")[2]) > 63:
        raise bad_request(
            f'unable to parse requirement: invalid label key "{key}": name part must consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character"
        )


def _check_value(value: str) -> None:
    if len(value) > 63 or not _LABEL_VALUE.match(value):
        raise bad_request(
            f'unable to parse requirement: values[0][{value}]: Invalid value: "{value}": a valid '
            "label must be an empty string or consist of alphanumeric characters, '-', '_' or "
            "'.', and must start and end with an alphanumeric character"
        )


def parse_labels(selector: str | None) -> Matcher | None:
    """Parse a label selector (=, ==, !=, in, notin, exists, !exists, gt, lt)."""
    if not selector or not selector.strip():
        return None
    toks = _tokens(selector.replace(">", " > ").replace("<", " < "))
    reqs: list[Matcher] = []
    i = 0

    def need(t: str) -> None:
        nonlocal i
        if i >= len(toks) or toks[i] != t:
            found = toks[i] if i < len(toks) else "EOF"
            raise bad_request(f"unable to parse requirement: found '{found}', expected: '{t}'")
        i += 1

    while i < len(toks):
        if toks[i] == "!":
            i += 1
            key = toks[i] if i < len(toks) else ""
            _check_key(key)
            i += 1
            reqs.append(_exists(key, False))
        else:
            key = toks[i]
            _check_key(key)
            i += 1
            op = toks[i] if i < len(toks) else ","
            if op == ",":
                reqs.append(_exists(key, True))
            elif op in ("=", "==", "!="):
                i += 1
                value = toks[i] if i < len(toks) and toks[i] != "," else ""
                if value:
                    i += 1
                _check_value(value)
                if op == "!=":
                    reqs.append(_equals(key, value, False))
                else:
                    reqs.append(_equals(key, value, True))
            elif op in ("in", "notin"):
                i += 1
                need("(")
                values: set[str] = set()
                while i < len(toks) and toks[i] != ")":
                    if toks[i] != ",":
                        _check_value(toks[i])
                        values.add(toks[i])
                    i += 1
                need(")")
                if op == "in":
                    reqs.append(_member(key, values, True))
                else:
                    reqs.append(_member(key, values, False))
            elif op in (">", "<"):
                i += 1
                raw = toks[i] if i < len(toks) else ""
                i += 1
                try:
                    bound = int(raw)
                except ValueError:
                    raise bad_request(
                        "unable to parse requirement: for 'Gt', 'Lt' operators, the value must "
                        "be an integer"
                    ) from None
                reqs.append(_compare(key, bound, op == ">"))
            else:
                raise bad_request(
                    f"unable to parse requirement: found '{op}', expected: in, notin, =, ==, "
                    "!=, gt, lt"
                )
        if i < len(toks):
            need(",")
    return lambda labels: all(r(labels) for r in reqs)


def _exists(key: str, present: bool) -> Matcher:
    if present:
        return lambda labels: key in labels
    return lambda labels: key not in labels


def _equals(key: str, value: str, equal: bool) -> Matcher:
    if equal:
        return lambda labels: labels.get(key) == value
    return lambda labels: labels.get(key) != value


def _member(key: str, values: set[str], inside: bool) -> Matcher:
    if inside:
        return lambda labels: labels.get(key) in values
    return lambda labels: labels.get(key) not in values


def _compare(key: str, bound: int, greater: bool) -> Matcher:
    def match(labels: dict[str, Any]) -> bool:
        try:
            v = int(labels[key])
        except (KeyError, ValueError):
            return False
        return v > bound if greater else v < bound

    return match


def match_labels_dict(selector: dict[str, Any] | None, labels: dict[str, Any]) -> bool:
    """Match a metav1.LabelSelector object (matchLabels + matchExpressions)."""
    if selector is None:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for expr in selector.get("matchExpressions") or []:
        k, op, vals = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if (op == "In" and labels.get(k) not in vals) or (op == "NotIn" and labels.get(k) in vals):
            return False
        if (op == "Exists" and k not in labels) or (op == "DoesNotExist" and k in labels):
            return False
    return True


def selector_string(selector: dict[str, Any] | None) -> str:
    """Render a metav1.LabelSelector as the string form (what Scale.status.selector holds)."""
    if not selector:
        return ""
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        k, op, vals = expr.get("key"), expr.get("operator"), sorted(expr.get("values") or [])
        if op == "In":
            parts.append(f"{k} in ({','.join(vals)})")
        elif op == "NotIn":
            parts.append(f"{k} notin ({','.join(vals)})")
        elif op == "Exists":
            parts.append(k)
        elif op == "DoesNotExist":
            parts.append(f"!{k}")
    return ",".join(sorted(parts))


# Field selectors kube-apiserver supports, per resource (beyond metadata.name/namespace).
def _path(*keys: str) -> Callable[[dict[str, Any]], str]:
    def get(obj: dict[str, Any]) -> str:
        cur: Any = obj
        for k in keys:
            cur = cur.get(k) if isinstance(cur, dict) else None
        if cur is None:
            return ""
        if isinstance(cur, bool):
            return "true" if cur else "false"
        return str(cur)

    return get


_COMMON = {
    "metadata.name": _path("metadata", "name"),
    "metadata.namespace": _path("metadata", "namespace"),
}
_EVENT = {
    f"involvedObject.{f}": _path("involvedObject", f)
    for f in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
}
_EVENT |= {
    "reason": _path("reason"),
    "type": _path("type"),
    "source": _path("source", "component"),
    "reportingComponent": _path("reportingComponent"),
}
FIELDS: dict[str, dict[str, Callable[[dict[str, Any]], str]]] = {
    "pods": {
        "spec.nodeName": _path("spec", "nodeName"),
        "spec.restartPolicy": _path("spec", "restartPolicy"),
        "spec.schedulerName": _path("spec", "schedulerName"),
        "spec.serviceAccountName": _path("spec", "serviceAccountName"),
        "spec.hostNetwork": lambda o: (
            "true" if (o.get("spec") or {}).get("hostNetwork") else "false"
        ),
        "status.phase": _path("status", "phase"),
        "status.podIP": _path("status", "podIP"),
        "status.nominatedNodeName": _path("status", "nominatedNodeName"),
    },
    "events": _EVENT,
    "secrets": {"type": _path("type")},
    "nodes": {
        "spec.unschedulable": lambda o: (
            "true" if (o.get("spec") or {}).get("unschedulable") else "false"
        )
    },
    "namespaces": {"status.phase": _path("status", "phase")},
    "events.events.k8s.io": {
        "regarding." + k.partition(".")[2]: _path("regarding", k.partition(".")[2])
        for k in _EVENT
        if k.startswith("involvedObject.")
    }
    | {"reason": _path("reason"), "type": _path("type")},
}


def _field_equals(getter: Callable[[dict[str, Any]], str], value: str, equal: bool) -> Matcher:
    if equal:
        return lambda obj: getter(obj) == value
    return lambda obj: getter(obj) != value


def parse_fields(resource: str, selector: str | None, *, custom: bool = False) -> Matcher | None:
    if not selector or not selector.strip():
        return None
    known = _COMMON | FIELDS.get(resource, {})
    reqs: list[Matcher] = []
    for term in selector.split(","):
        term = term.strip()
        if not term:
            continue
        m = re.match(r"^([^=!]+?)\s*(==|=|!=)\s*(.*)$", term)
        if not m:
            raise bad_request(f"invalid selector: '{selector}'; can't understand '{term}'")
        field, op, value = m.group(1).strip(), m.group(2), m.group(3).strip()
        getter = known.get(field)
        if getter is None:
            if resource in FIELDS or custom:
                # the kind's own field label conversion, or a custom resource's
                raise bad_request(f"field label not supported: {field}")
            # apimachinery's default conversion, for kinds that only select on metadata
            raise bad_request(
                f'"{field}" is not a known field selector: only "metadata.name", '
                '"metadata.namespace"'
            )
        if op == "!=":
            reqs.append(_field_equals(getter, value, False))
        else:
            reqs.append(_field_equals(getter, value, True))
    return lambda obj: all(r(obj) for r in reqs)


def exact_name(selector: str | None) -> str | None:
    """The name a `metadata.name=X` field selector pins, so lookups can skip a scan."""
    if not selector or "," in selector or "!=" in selector:
        return None
    field, _, value = selector.replace("==", "=").partition("=")
    return value.strip() if field.strip() == "metadata.name" else None
