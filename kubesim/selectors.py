"""Label and field selectors with the syntax and errors of k8s.io/apimachinery."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kubesim.errors import bad_request, render_value
from kubesim.names import label_value_errors, qualified_name_errors

Matcher = Callable[[dict[str, Any]], bool]

# --- label selectors: a port of labels.Parse's lexer and parser, for its words ---------------

_WHITESPACE = " \t\r\n"
_SPECIAL = "=!(),<>"
_SYMBOLS = {"!", "!=", "(", ")", ",", "<", "=", "==", ">"}
_ID, _END = "identifier", "end of string"  # every other token's kind is its text


class _ParseError(Exception):
    pass


def _lex(selector: str) -> list[tuple[str, str]]:
    """(kind, text) tokens; a run of symbols is split into the longest symbols it starts with."""
    tokens: list[tuple[str, str]] = []
    i, n = 0, len(selector)
    while True:
        while i < n and selector[i] in _WHITESPACE:
            i += 1
        if i == n:
            tokens.append((_END, ""))
            return tokens
        j = i
        if selector[i] in _SPECIAL:
            while j < n and selector[j] in _SPECIAL and selector[i : j + 1] in _SYMBOLS:
                j += 1
            tokens.append((selector[i:j], selector[i:j]))
        else:
            while j < n and selector[j] not in _WHITESPACE and selector[j] not in _SPECIAL:
                j += 1
            word = selector[i:j]
            tokens.append((word if word in ("in", "notin") else _ID, word))
        i = j


class _Parser:
    def __init__(self, selector: str) -> None:
        self.tokens = _lex(selector)
        self.at = 0

    def peek(self) -> tuple[str, str]:
        """The next token, with `in` and `notin` read as identifiers (the Values context)."""
        kind, text = self.tokens[self.at]
        return (_ID if kind in ("in", "notin") else kind), text

    def take(self, *, operator: bool = False) -> tuple[str, str]:
        token = self.tokens[self.at] if operator else self.peek()
        self.at += 1
        return token

    def requirements(self) -> list[Matcher]:
        found: list[Matcher] = []
        while True:
            kind, text = self.peek()
            if kind == _END:
                return found
            if kind not in (_ID, "!"):
                raise _ParseError(f"found '{text}', expected: !, identifier, or 'end of string'")
            try:
                found.append(self.requirement())
            except _ParseError as exc:
                raise _ParseError(f"unable to parse requirement: {exc}") from None
            kind, text = self.take()
            if kind == _END:
                return found
            if kind != ",":
                raise _ParseError(f"found '{text}', expected: ',' or 'end of string'")
            kind, text = self.peek()
            if kind not in (_ID, "!"):
                raise _ParseError(f"found '{text}', expected: identifier after ','")

    def requirement(self) -> Matcher:
        kind, key = self.take()
        absent = kind == "!"
        if absent:
            kind, key = self.take()
        if kind != _ID:
            raise _ParseError(f"found '{key}', expected: identifier")
        if why := qualified_name_errors(key):
            raise _ParseError(f"<nil>: Invalid value: {render_value(key)}: {'; '.join(why)}")
        if absent or self.peek()[0] in (_END, ","):
            return _exists(key, not absent)
        op, text = self.take(operator=True)
        if op not in ("in", "notin", "=", "==", "!=", ">", "<"):
            raise _ParseError(f"found '{text}', expected: in, notin, =, ==, !=, gt, lt")
        values = sorted(self.values() if op in ("in", "notin") else self.exact_value())
        errors = [  # NewRequirement's field errors, as one aggregate
            f"values[{i}]: Invalid value: {render_value(v)}: for 'Gt', 'Lt' operators, the value "
            "must be an integer"
            for i, v in enumerate(values)
            if op in ("<", ">") and not re.fullmatch(r"[+-]?[0-9]+", v)
        ]
        errors += [
            f"values[{i}][{key}]: Invalid value: {render_value(v)}: {'; '.join(why)}"
            for i, v in enumerate(values)
            if (why := label_value_errors(v))
        ]
        if errors:
            raise _ParseError(errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]")
        if op in ("in", "notin"):
            return _member(key, set(values), op == "in")
        if op in ("<", ">"):
            return _compare(key, int(values[0]), op == ">")
        return _equals(key, values[0], op != "!=")

    def values(self) -> set[str]:
        kind, text = self.take()
        if kind != "(":
            raise _ParseError(f"found '{text}' expected: '('")
        kind, text = self.peek()
        if kind == ")":
            self.take()
            return {""}
        if kind not in (_ID, ","):
            raise _ParseError(f"found '{text}', expected: ',', ')' or identifier")
        found = self.identifiers()
        if self.take()[0] != ")":
            raise _ParseError(f"found '{text}', expected: ')'")
        return found

    def identifiers(self) -> set[str]:
        found: set[str] = set()
        while True:
            kind, text = self.take()
            if kind == _ID:
                found.add(text)
                after, after_text = self.peek()
                if after == ")":
                    return found
                if after != ",":
                    raise _ParseError(f"found '{after_text}', expected: ',' or ')'")
            elif kind == ",":  # an empty value when a comma opens or closes the list, or doubles
                if not found or self.peek()[0] in (")", ","):
                    found.add("")
                if self.peek()[0] == ")":
                    return found
                if self.peek()[0] == ",":
                    self.take()
            else:
                raise _ParseError(f"found '{text}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        if self.peek()[0] in (_END, ","):
            return {""}
        kind, text = self.take()
        if kind != _ID:
            raise _ParseError(f"found '{text}', expected: identifier")
        return {text}


def parse_labels(selector: str | None) -> Matcher | None:
    """Parse a label selector (=, ==, !=, in, notin, exists, !exists, >, <)."""
    if not selector or not selector.strip():
        return None
    try:
        reqs = _Parser(selector).requirements()
    except _ParseError as exc:
        raise bad_request(str(exc)) from None
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
