"""The diff kube-apiserver appends to a refused pod update: `cmp.Diff(oldPod.Spec,
mungedPodSpec)` in go-cmp's report format, approximately.

What follows go-cmp: the `core.PodSpec{` frame, Go field names in the internal type's order,
`-`/`+` lines for a changed value, structs, maps and same-length lists of structs compared
field by field, two identical records of context around each change and the rest elided as
`... // N identical fields` (elements, entries), keys aligned within a run of one-line
records, and values in its compact form (zero fields left out, `nil`, `&` for pointers,
types named only where the field's type is not implied). What does not: lists of strings and
lists of different lengths are shown whole rather than element by element, quantities as
their string, and the internal types' fields are read from the v1 types (the internal
PodSpec's own order is known; pod-level host* fields, kept in the internal
PodSecurityContext, are left out), so a diff outside the common fields may be worded
differently."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubesim import protobuf
from kubesim.gojson import go_quote

_CORE = "k8s.io.api.core.v1."
_QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
_CONTEXT = 2  # go-cmp's numContextRecords
# core.PodSpec's fields in the internal type's order (pkg/apis/core/types.go, v1.28)
_POD_SPEC = [
    "volumes",
    "initContainers",
    "containers",
    "ephemeralContainers",
    "restartPolicy",
    "terminationGracePeriodSeconds",
    "activeDeadlineSeconds",
    "dnsPolicy",
    "nodeSelector",
    "serviceAccountName",
    "automountServiceAccountToken",
    "nodeName",
    "securityContext",
    "imagePullSecrets",
    "hostname",
    "subdomain",
    "setHostnameAsFQDN",
    "affinity",
    "schedulerName",
    "tolerations",
    "hostAliases",
    "priorityClassName",
    "priority",
    "preemptionPolicy",
    "dnsConfig",
    "readinessGates",
    "runtimeClassName",
    "overhead",
    "enableServiceLinks",
    "topologySpreadConstraints",
    "os",
    "schedulingGates",
    "resourceClaims",
]
_GO_NAMES = {
    "dnsPolicy": "DNSPolicy",
    "dnsConfig": "DNSConfig",
    "setHostnameAsFQDN": "SetHostnameAsFQDN",
    "os": "OS",
    "tty": "TTY",
    "hostPID": "HostPID",
    "hostIPC": "HostIPC",
    "ip": "IP",
    "hostIP": "HostIP",
    "podIP": "PodIP",
    "fsType": "FSType",
    "apiVersion": "APIVersion",
    "uid": "UID",
}
# embedded structs whose fields JSON flattens into the parent
_INLINE = {"volumeSource", "localObjectReference", "ephemeralContainerCommon"}
# The schema marks a field that Go always marshals: a pointer, or a value without omitempty.
# These strings are pointers (the others values), these numbers and booleans values.
_POINTER_STRINGS = {
    "restartPolicy",
    "runtimeClassName",
    "preemptionPolicy",
    "fsGroupChangePolicy",
    "storageClassName",
    "volumeMode",
    "mountPropagation",
    "procMount",
    "localhostProfile",
    "appProtocol",
    "nodeAffinityPolicy",
    "nodeTaintsPolicy",
    "apiGroup",
    "gmsaCredentialSpecName",
    "gmsaCredentialSpec",
    "runAsUserName",
    "resourceClaimName",
    "resourceClaimTemplateName",
}
# (expirationSeconds is a pointer in v1, a value in the internal type)
_VALUE_NUMBERS = {
    "containerPort",
    "port",
    "weight",
    "maxSkew",
    "exitCode",
    "restartCount",
    "ready",
    "expirationSeconds",
}


@dataclass(frozen=True)
class _Field:
    json: str
    kind: str  # the protobuf type: "string", "int", "bool", "map:string:...", a message
    repeated: bool
    pointer: bool

    @property
    def go(self) -> str:
        return _GO_NAMES.get(self.json) or self.json[:1].upper() + self.json[1:]


def pod_spec_diff(old: dict[str, Any], new: dict[str, Any]) -> str:
    """The report of old and new pod specs, each line as go-cmp writes it, ending in a newline."""
    lines = ["  core.PodSpec{"]
    lines += _struct_lines(_pod_spec_fields(), old, new, 1)
    lines.append("  }")
    return "\n".join(lines) + "\n"


def _pod_spec_fields() -> list[_Field]:
    by_name = {f.json: f for f in _fields(_CORE + "PodSpec")}
    return [by_name[name] for name in _POD_SPEC if name in by_name]


def _fields(message: str) -> list[_Field]:
    found = []
    for name, kind, flags in protobuf.schema().get(message, {}).values():
        repeated = bool(flags & protobuf.REPEATED)
        pointer = bool(flags & protobuf.KEEP_ZERO) and not repeated
        if kind == "string":
            pointer = pointer and name in _POINTER_STRINGS
        elif kind in ("int", "bool"):
            pointer = pointer and name not in _VALUE_NUMBERS
        found.append(_Field(name, kind, repeated, pointer))
    return found


def _value(obj: Any, field: _Field) -> Any:
    if not isinstance(obj, dict):
        return None
    return obj if field.json in _INLINE else obj.get(field.json)


# --- records ------------------------------------------------------------------------------------


@dataclass
class _Record:
    key: str  # a field's name or a map's key; "" for a list's element
    text: str  # one line, or the first line of a multi-line value
    mark: str = " "  # " ", "-" or "+"
    body: list[str] | None = None  # the lines of a multi-line value, after `text`
    ellipsis: bool = False


def _struct_lines(fields: list[_Field], old: Any, new: Any, depth: int) -> list[str]:
    pairs = [(f.go, f, _value(old, f), _value(new, f)) for f in fields]
    return _render(_records(pairs, depth, "field"), depth)


def _records(pairs: list[tuple[str, _Field, Any, Any]], depth: int, noun: str) -> list[_Record]:
    """go-cmp's formatDiffList: changed records, with context, and the rest elided."""
    same = [_equal(a, b) for _, _, a, b in pairs]
    records: list[_Record] = []
    groups = _groups(same)
    for g, (start, end, equal) in enumerate(groups):
        if not equal:
            for key, field, a, b in pairs[start:end]:
                records += _changed(key, field, a, b, depth)
            continue
        count = end - start
        lo = min(_CONTEXT, count) if g != 0 else 0
        hi = min(_CONTEXT, count - lo) if g != len(groups) - 1 else 0
        if count - (lo + hi) == 1:
            hi += 1  # one record is shown rather than elided
        for key, field, a, _ in pairs[start : start + lo]:
            records.append(_Record(key, _compact(field, a)))
        if count > lo + hi:
            n = count - lo - hi
            text = f"... // {n} identical {_plural(noun, n)}"
            records.append(_Record("", text, ellipsis=True))
        for key, field, a, _ in pairs[end - hi : end]:
            records.append(_Record(key, _compact(field, a)))
    return records


def _groups(same: list[bool]) -> list[tuple[int, int, bool]]:
    groups: list[tuple[int, int, bool]] = []
    for i, equal in enumerate(same):
        if groups and groups[-1][2] == equal:
            groups[-1] = (groups[-1][0], i + 1, equal)
        else:
            groups.append((i, i + 1, equal))
    return groups


def _plural(noun: str, n: int) -> str:
    if n == 1:
        return noun
    return noun[:-1] + "ies" if noun.endswith("y") else noun + "s"


def _changed(key: str, field: _Field, a: Any, b: Any, depth: int) -> list[_Record]:
    """A changed value: compared inside where both are structs, maps or same-length lists of
    structs, else shown whole, old then new."""
    message = field.kind not in ("string", "int", "bool", _QUANTITY) and not field.kind.startswith(
        "map:"
    )
    if field.repeated and message and isinstance(a, list) and isinstance(b, list):
        if len(a) == len(b):
            elem = _Field("", field.kind, False, False)
            pairs = [("", elem, x, y) for x, y in zip(a, b, strict=True)]
            head = f"[]{_go_type(field.kind)}{{"
            return [
                _Record(key, head, body=_render(_records(pairs, depth + 1, "element"), depth + 1))
            ]
    elif message and not field.repeated and isinstance(a, dict) and isinstance(b, dict):
        # a list's element has its type implied
        head = "{" if not key else ("&" if field.pointer else "") + _go_type(field.kind) + "{"
        body = _struct_lines(_fields(field.kind), a, b, depth + 1)
        return [_Record(key, head, body=body)]
    elif field.kind.startswith("map:") and isinstance(a, dict) and isinstance(b, dict):
        value = _Field("", field.kind.split(":", 2)[2], False, False)
        stringer = "s" if value.kind == _QUANTITY else ""  # a ResourceName prints as a Stringer
        pairs = [
            (stringer + go_quote(k), value, a.get(k), b.get(k)) for k in sorted(set(a) | set(b))
        ]
        head = f"map[string]{_go_type(value.kind)}{{"
        return [_Record(key, head, body=_render(_records(pairs, depth + 1, "entry"), depth + 1))]
    return [_Record(key, _typed(field, a), "-"), _Record(key, _typed(field, b), "+")]


def _render(records: list[_Record], depth: int) -> list[str]:
    """Each record as a line (or lines), keys aligned within each run of one-line records."""
    widths = _run_widths(records)
    lines = []
    tabs = "\t" * depth
    for record, width in zip(records, widths, strict=True):
        if record.ellipsis:
            lines.append(f"{record.mark} {tabs}{record.text}")
            continue
        key = f"{record.key}:{' ' * (width - len(record.key))} " if record.key else ""
        if record.body is None:
            lines.append(f"{record.mark} {tabs}{key}{record.text},")
            continue
        lines.append(f"{record.mark} {tabs}{key}{record.text}")
        lines += record.body
        lines.append(f"{record.mark} {tabs}}},")
    return lines


def _run_widths(records: list[_Record]) -> list[int]:
    """The key width of each one-line record: the longest key of its run (a multi-line value
    or an ellipsis ends a run)."""
    widths = [0] * len(records)
    start = 0
    while start < len(records):
        if not _aligns(records[start]):
            start += 1
            continue
        end = start
        while end < len(records) and _aligns(records[end]):
            end += 1
        width = max(len(r.key) for r in records[start:end])
        for i in range(start, end):
            widths[i] = width
        start = end
    return widths


def _aligns(record: _Record) -> bool:
    return bool(record.key) and record.body is None and not record.ellipsis


# --- values -------------------------------------------------------------------------------------


def _equal(a: Any, b: Any) -> bool:
    return bool(_normal(a) == _normal(b))


def _normal(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {k: _normal(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not None}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def _go_type(kind: str) -> str:
    if kind.startswith(_CORE):
        return "core." + kind[len(_CORE) :]
    if kind == _QUANTITY:
        return "resource.Quantity"
    if kind in ("string", "bool"):
        return kind
    if kind == "int":
        return "int32"
    return "v1." + kind.rpartition(".")[2]


_RESOURCE_LISTS = {"limits", "requests", "overhead", "capacity", "allocatable", "hard", "used"}


def _typed(field: _Field, value: Any) -> str:
    """A changed value: as _compact, its type named (a list, map or struct that is set)."""
    text = _compact(field, value)
    if value is None or field.kind in ("string", "int", "bool", _QUANTITY):
        return text
    if field.repeated:
        return f"[]{_go_type(field.kind)}{text}"
    if field.kind.startswith("map:"):
        if field.json in _RESOURCE_LISTS:
            return f"core.ResourceList{text}"
        return f"map[string]{_go_type(field.kind.split(':', 2)[2])}{text}"
    if text.startswith("&"):
        return f"&{_go_type(field.kind)}{text[1:]}"
    return f"{_go_type(field.kind)}{text}"


_DECIMAL_SCALES = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


def _quantity(text: str) -> str:
    """A resource.Quantity's fields as go-cmp prints them, for the canonical forms kubesim
    keeps (an integer and a suffix); anything else as its string."""
    number = text.rstrip("numkMGTPEi")
    suffix = text[len(number) :]
    if not number.lstrip("-").isdigit():
        return go_quote(text)
    if suffix in _BINARY:
        amount, form = f"value: {int(number) << _BINARY[suffix]}", "BinarySI"
    elif suffix in _DECIMAL_SCALES:
        scale = _DECIMAL_SCALES[suffix]
        amount = f"value: {number}" + (f", scale: {scale}" if scale else "")
        form = "DecimalSI"
    else:
        return go_quote(text)
    return f"{{i: resource.int64Amount{{{amount}}}, s: {go_quote(text)}, Format: {go_quote(form)}}}"


def _compact(field: _Field, value: Any) -> str:
    """go-cmp's one-line form of a value of the field's type."""
    if field.repeated:
        if not isinstance(value, list):
            return "nil"
        elem = _Field("", field.kind, False, False)
        return "{" + ", ".join(_compact(elem, v) for v in value) + "}"
    if field.kind.startswith("map:"):
        if not isinstance(value, dict):
            return "nil"
        elem = _Field("", field.kind.split(":", 2)[2], False, False)
        if elem.kind == _QUANTITY:  # a ResourceList: its keys are Stringers
            pairs = (f"s{go_quote(k)}: {_quantity(str(value[k]))}" for k in sorted(value))
            return "{" + ", ".join(pairs) + "}"
        return (
            "{"
            + ", ".join(f"{go_quote(k)}: {_compact(elem, value[k])}" for k in sorted(value))
            + "}"
        )
    if field.kind in ("string", "int", "bool") or field.kind == _QUANTITY:
        if value is None:
            return "nil" if field.pointer else _zero(field.kind)
        shown = _quantity(str(value)) if field.kind == _QUANTITY else _scalar(value)
        return ("&" if field.pointer else "") + shown
    if value is None:
        return "nil" if field.pointer else "{}"
    parts = []
    for sub in _fields(field.kind):
        v = _value(value, sub)
        if v is None or v in ("", 0, False, [], {}):
            continue  # go-cmp leaves zero fields out
        parts.append(f"{sub.go}: {_compact(sub, v)}")
    return ("&" if field.pointer else "") + "{" + ", ".join(parts) + "}"


def _zero(kind: str) -> str:
    return {"string": '""', "int": "0", "bool": "false"}.get(kind, "{}")


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    return str(value)
