"""metadata.managedFields, as kube-apiserver v1.28 keeps them (its fieldmanager package).

A field set travels in its wire form, fieldsV1: {"f:spec": {"f:replicas": {}}}. A node
without children ({}) is a member of the set; a node with children is one only when it
holds ".". None is the empty set. Items of associative lists are "k:{...}" (their key
fields, sorted), items of set lists "v:<json>"; atomic lists and maps are owned whole.

An Update (create, PUT, JSON/merge/strategic patches, status and scale) gives its manager
the fields it added or changed, as structured-merge-diff's Compare finds them: a map or
list item that was absent owns itself ("."), leaves are compared by value. Those fields and
the removed ones are taken from every other manager; empty entries go. An Apply owns the
fields of the configuration it sent; apply_ownership.py refuses its conflicts beforehand and
removes the fields it dropped. After an Update, no more than 10 Update entries are kept: the
oldest merge into `ancient-changes`, one per apiVersion (capmanagers.go).
"""

from __future__ import annotations

import time
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from kubesim.gojson import compact, html_escaped
from kubesim.jsonutil import dumps, now

Fields = dict[str, Any]
Entry = dict[str, Any]

MAX_MANAGER = 128
MAX_UPDATE_MANAGERS = 10  # DefaultMaxUpdateManagers
ANCIENT_CHANGES = "ancient-changes"
# Who owns what an object held before its first apply, where no one owned it (the server's
# skipNonApplied manager records it so, and the apply conflicts with it).
BEFORE_FIRST_APPLY = "before-first-apply"
UNSET: Any = object()  # no managedFields were sent
_MISSING = UNSET
# What stripMetaManager leaves out of every set: identity and bookkeeping the server owns.
_STRIPPED_META = frozenset(
    {
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    }
)
# Fields of the built-in Go types that are always in the object the server compares with,
# even a new one: non-pointer structs ({}) and lists without omitempty (None, as null).
# They never own themselves: no "." under f:spec or f:containers.
_POD_SPEC = {"containers": None}
_TEMPLATE = {"metadata": {}, "spec": _POD_SPEC}
_SKELETON: dict[str, Any] = {
    "metadata": {},
    "spec": {
        **_POD_SPEC,
        "template": _TEMPLATE,
        "strategy": {},
        "updateStrategy": {},
        "resources": {},
        "jobTemplate": {"metadata": {}, "spec": {"template": _TEMPLATE}},
    },
    "status": {"loadBalancer": {}, "daemonEndpoints": {"kubeletEndpoint": {}}, "nodeInfo": {}},
}
# Associative lists of the built-in kinds (+listType=map): (field, parent or None) -> keys.
_LIST_KEYS: dict[tuple[str, str | None], tuple[str, ...]] = {
    ("containers", None): ("name",),
    ("initContainers", None): ("name",),
    ("ephemeralContainers", None): ("name",),
    ("env", None): ("name",),
    ("volumes", None): ("name",),
    ("volumeMounts", None): ("mountPath",),
    ("volumeDevices", None): ("devicePath",),
    ("conditions", None): ("type",),
    ("imagePullSecrets", None): ("name",),
    ("hostAliases", None): ("ip",),
    ("ownerReferences", None): ("uid",),
    ("resourceClaims", None): ("name",),
    ("topologySpreadConstraints", None): ("topologyKey", "whenUnsatisfiable"),
    ("ports", "containers"): ("containerPort", "protocol"),
    ("ports", "initContainers"): ("containerPort", "protocol"),
    ("ports", "ephemeralContainers"): ("containerPort", "protocol"),
    ("ports", "spec"): ("port", "protocol"),  # a Service's
    ("addresses", "status"): ("type",),  # a Node's
}
_SET_LISTS = {("finalizers", "metadata")}
# What the registry fills in after the field manager ran (a Service's IP allocation): a
# create does not own it.
_FILLED_LATER = {"services": ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy")}
# Maps and structs owned whole (+mapType=atomic, +structType=atomic).
_ATOMIC_MAPS = frozenset(
    {
        "selector",
        "nodeSelector",
        "podSelector",
        "namespaceSelector",
        "labelSelector",
        "fieldRef",
        "resourceFieldRef",
        "configMapKeyRef",
        "secretKeyRef",
    }
)


_clock: list[Any] = [0, ""]  # the second last formatted, and its text


def _now() -> str:
    """now(), formatted once a second: strftime was a tenth of a tracked write's cost."""
    second = int(time.time())
    if _clock[0] != second:
        _clock[:] = [second, now()]
    return str(_clock[1])


def manager_name(field_manager: str | None, user_agent: str) -> str:
    """managerOrUserAgent: the fieldManager asked for, else the User-Agent up to its first
    "/" ("kubectl", "OpenAPI-Generator" for the Python client), cut at 128 bytes."""
    if field_manager:
        return field_manager
    return user_agent.split("/", 1)[0][:MAX_MANAGER]


# --- field sets ----------------------------------------------------------------------------


def _member(node: Fields) -> bool:
    return not node or "." in node


def union(a: Fields | None, b: Fields | None) -> Fields | None:
    """a with b's members; a itself (not a copy) when b adds none: a manager writing the
    fields it owns already keeps sharing its set with the versions before."""
    if a is None:
        return b
    if b is None or a is b:
        return a
    member = _member(a)
    out: Fields = {".": {}} if member or _member(b) else {}
    same = member or not _member(b)
    for k, v in a.items():
        if k != ".":
            sub = out[k] = union(v, b.get(k))
            same = same and sub is v
    for k, v in b.items():
        if k != "." and k not in a:
            out[k] = v
            same = False
    result = {} if list(out) == ["."] else out
    return a if same and result == a else result


def difference(a: Fields | None, b: Fields | None) -> Fields | None:
    """a without b's members; a itself (not a copy) when they share none."""
    if a is None or b is None:
        return a
    member = _member(a)
    keep = member and not _member(b)
    out: Fields = {".": {}} if keep else {}
    same = keep == member
    for k, v in a.items():
        if k == ".":
            continue
        sub = difference(v, b[k]) if k in b else v
        same = same and sub is v
        if sub is not None:
            out[k] = sub
    if same:
        return a
    if not out:
        return None
    return {} if list(out) == ["."] else out


def intersection(a: Fields | None, b: Fields | None) -> Fields | None:
    """The members a and b share."""
    if a is None or b is None:
        return None
    out: Fields = {".": {}} if _member(a) and _member(b) else {}
    for k, v in a.items():
        if k != "." and k in b and (sub := intersection(v, b[k])) is not None:
            out[k] = sub
    if not out:
        return None
    return {} if list(out) == ["."] else out


# --- the shapes of objects -----------------------------------------------------------------


class Shape:
    """How a value is merged: the built-in kinds' by field name, a CRD's from its schema."""

    __slots__ = ("field", "parent", "schema")

    def __init__(self, field: str, parent: str | None, schema: dict[str, Any] | None) -> None:
        self.field, self.parent, self.schema = field, parent, schema

    def child(self, key: str) -> Shape:
        s = self.schema
        if s is not None:
            props = s.get("properties") or {}
            sub = props.get(key)
            if sub is None:
                extra = s.get("additionalProperties")
                sub = extra if isinstance(extra, dict) else None
            return Shape(key, self.field, sub if isinstance(sub, dict) else None)
        return Shape(key, self.field, None)

    def item(self) -> Shape:
        s = self.schema
        if s is not None:
            items = s.get("items")
            return Shape(self.field, self.parent, items if isinstance(items, dict) else None)
        return self

    def atomic_map(self) -> bool:
        if self.schema is not None:
            return self.schema.get("x-kubernetes-map-type") == "atomic"
        return self.field in _ATOMIC_MAPS

    def list_keys(self) -> tuple[str, ...] | None:
        """The keys of an associative list, () for a set, None for an atomic list."""
        s = self.schema
        if s is not None:
            kind = s.get("x-kubernetes-list-type")
            if kind == "map":
                return tuple(s.get("x-kubernetes-list-map-keys") or ())
            return () if kind == "set" else None
        if (self.field, self.parent) in _SET_LISTS:
            return ()
        return _LIST_KEYS.get((self.field, self.parent)) or _LIST_KEYS.get((self.field, None))


def _item_key(item: Any, keys: tuple[str, ...]) -> str:
    if not keys:
        return "v:" + dumps(item).decode()
    if not isinstance(item, dict):
        return "v:" + dumps(item).decode()
    picked = {k: item[k] for k in sorted(keys) if k in item}
    return "k:" + dumps(picked).decode()


def _granular_list(value: Any, shape: Shape) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not value:
        return None
    return shape.list_keys()


def _whole(value: Any, shape: Shape) -> Fields:
    """Every field of a value that was absent: itself, and all under it."""
    if isinstance(value, dict):
        if not value or shape.atomic_map():
            return {}
        out: Fields = {".": {}}
        for k, v in value.items():
            # a scalar owns itself alone: no shape is looked up for it
            out["f:" + k] = _whole(v, shape.child(k)) if isinstance(v, _NESTED) else {}
        return out
    keys = _granular_list(value, shape)
    if keys is None:
        return {}
    item = shape.item()
    out = {".": {}}
    for v in value:
        out[_item_key(v, keys)] = _whole(v, item) if keys else {}
    return out


def _items(value: list[Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {_item_key(v, keys): v for v in value}


Diff = tuple["Fields | None", "Fields | None"]  # (added or changed, removed)
_NESTED = (dict, list)


def _leaf_diff(lhs: Any, rhs: Any) -> Diff:
    """_diff of two different values neither of which is a map or a list."""
    return (None, {}) if rhs is _MISSING else ({}, None)


def _diff(lhs: Any, rhs: Any, shape: Shape, skeleton: dict[str, Any] | None) -> Diff:
    if lhs is _MISSING:
        return _whole(rhs, shape), None
    if rhs is _MISSING:
        return None, _whole(lhs, shape)
    if lhs == rhs:
        return None, None
    if lhs is None and isinstance(rhs, (dict, list)):
        lhs = type(rhs)()  # a null that is there: its items are new, not the list itself
    if isinstance(lhs, dict) and isinstance(rhs, dict) and not shape.atomic_map():
        return _diff_map(lhs, rhs, shape, skeleton)
    if isinstance(lhs, list) and isinstance(rhs, list) and (lhs or rhs):
        keys = shape.list_keys()
        if keys is not None:
            return _diff_list(lhs, rhs, shape, keys)
    return {}, None  # a leaf whose value changed


def _diff_map(
    lhs: dict[str, Any],
    rhs: dict[str, Any],
    shape: Shape,
    skeleton: dict[str, Any] | None,
    keys: AbstractSet[str] | None = None,
) -> Diff:
    """The maps' diff, over `keys` (default: all of both)."""
    changed: Fields = {}
    removed: Fields = {}
    for k in lhs.keys() | rhs.keys() if keys is None else keys:
        empty, sub = _MISSING, None
        if skeleton is not None and k in skeleton:
            sub = skeleton[k]
            empty = {} if sub is not None else None
        a, b = lhs.get(k, empty), rhs.get(k, empty)
        if a is b or (a is not _MISSING and b is not _MISSING and a == b):
            continue  # most of an object is as it was: no shapes looked up for it
        if isinstance(a, _NESTED) or isinstance(b, _NESTED):
            c, r = _diff(a, b, shape.child(k), sub)
        else:  # two scalars, or one: a leaf whose shape does not matter
            c, r = _leaf_diff(a, b)
        if c is not None:
            changed["f:" + k] = c
        if r is not None:
            removed["f:" + k] = r
    return changed or None, removed or None


def _diff_list(lhs: list[Any], rhs: list[Any], shape: Shape, keys: tuple[str, ...]) -> Diff:
    before, after = _items(lhs, keys), _items(rhs, keys)
    item = shape.item()
    changed: Fields = {}
    removed: Fields = {}
    for k in before.keys() | after.keys():
        c, r = _diff(before.get(k, _MISSING), after.get(k, _MISSING), item, None)
        if c is not None:
            changed[k] = c
        if r is not None:
            removed[k] = r
    return changed or None, removed or None


def _owned(value: Any, shape: Shape) -> Fields | None:
    """toFieldSet: the fields an applied configuration sets (leaves, empty maps, list
    items); a map owns itself only where it is empty."""
    if isinstance(value, dict):
        if not value or shape.atomic_map():
            return {}
        out: Fields = {}
        for k, v in value.items():
            sub = _owned(v, shape.child(k))
            if sub is not None:
                out["f:" + k] = sub
        return out or None
    keys = _granular_list(value, shape)
    if keys is None:
        return {}
    item = shape.item()
    out = {}
    for v in value:
        sub = _owned(v, item) if keys else {}
        out[_item_key(v, keys)] = {".": {}, **sub} if sub else {}
    return out


# --- one write -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Write:
    """Who writes, and how: what a managedFields entry is keyed by."""

    manager: str
    api_version: str
    subresource: str | None = None
    applied: dict[str, Any] | None = None  # an Apply's configuration, else an Update


@dataclass(frozen=True, slots=True)
class Kind:
    """What the tracker needs of a resource type."""

    resource: str
    custom: bool
    schema: dict[str, Any] | None  # a CRD version's openAPIV3Schema
    status_reset: bool  # the status subresource owns status: main writes never do


Scope = tuple[set[str], "set[str] | None"]  # the top-level fields to compare, metadata's


def _scope(entries: list[Any]) -> Scope:
    """The top-level fields, and metadata's (None: all of them), under which some entry owns
    anything. A write that records no entry of its own changes the entries there alone, so
    the rest need not be compared: a controller's status write when no one owns status."""
    top: set[str] = set()
    meta: set[str] | None = set()
    for entry in entries:
        fields = entry.get("fieldsV1") if isinstance(entry, dict) else None
        if not isinstance(fields, dict):
            continue
        top.update(k[2:] for k in fields if k.startswith("f:"))
        owned = fields.get("f:metadata")
        if meta is not None and isinstance(owned, dict):
            if _member(owned):
                meta = None
            else:
                meta.update(k[2:] for k in owned if k.startswith("f:"))
    return top, meta


def _root_diff(
    kind: Kind,
    old: dict[str, Any] | None,
    new: dict[str, Any],
    main: bool,
    scope: Scope | None = None,
) -> Diff:
    shape = Shape("", None, kind.schema)
    skeleton = {"metadata": {}} if kind.custom else _SKELETON
    ignored = {"apiVersion", "kind", "metadata"}
    if main and kind.status_reset:
        ignored.add("status")
    before = old or {}
    keys = (before.keys() | new.keys()) - ignored
    # metadata: its identity and bookkeeping are the server's, never compared
    meta_old, meta_new = before.get("metadata") or {}, new.get("metadata") or {}
    meta_keys = (meta_old.keys() | meta_new.keys()) - _STRIPPED_META
    if scope is not None:
        keys &= scope[0]
        if scope[1] is not None:
            meta_keys &= scope[1]
    changed, removed = _diff_map(before, new, shape, skeleton, keys)
    c, r = _diff_map(meta_old, meta_new, shape.child("metadata"), {}, meta_keys)
    if c is not None:
        changed = {**(changed or {}), "f:metadata": c}
    if r is not None:
        removed = {**(removed or {}), "f:metadata": r}
    filled = _FILLED_LATER.get(kind.resource)
    if old is None and filled and changed and "f:spec" in changed:
        spec = {k: v for k, v in changed["f:spec"].items() if k[2:] not in filled}
        changed = (
            {**changed, "f:spec": spec}
            if spec
            else {k: v for k, v in changed.items() if k != "f:spec"}
        )
    return changed, removed


def changed_fields(
    kind: Kind, old: dict[str, Any], new: dict[str, Any], subresource: str | None
) -> Fields | None:
    """The fields a write from `old` to `new` added or changed, as an Update would own them."""
    return _root_diff(kind, old, new, subresource is None)[0]


def _strip(fields: Fields | None) -> Fields | None:
    if fields is None or "f:metadata" not in fields:
        return fields
    meta = {
        k: v
        for k, v in fields["f:metadata"].items()
        if k != "." and not (k.startswith("f:") and k[2:] in _STRIPPED_META)
    }
    out = {k: v for k, v in fields.items() if k != "f:metadata"}
    if meta:
        out["f:metadata"] = meta
    return out or None


def applied_fields(kind: Kind, config: dict[str, Any]) -> Fields | None:
    body = {k: v for k, v in config.items() if k not in ("apiVersion", "kind")}
    return _strip(_owned(body, Shape("", None, kind.schema)))


def _valid(entries: Any) -> bool:
    """What DecodeManagedFields accepts; anything else is ignored for the live list."""
    if not isinstance(entries, list):
        return False
    return all(
        isinstance(e, dict)
        and e.get("fieldsType") == "FieldsV1"
        and e.get("operation") in ("Apply", "Update")
        and isinstance(e.get("fieldsV1", {}), dict)
        for e in entries
    )


def _is_reset(entries: Any) -> bool:
    return isinstance(entries, list) and (entries == [] or entries == [{}])


def identity(entry: Entry) -> tuple[str, str, str, str]:
    """Whose entry it is: (manager, operation, apiVersion, subresource), an Apply's without
    its version (one Apply entry per manager, whatever version it applied)."""
    op = entry.get("operation", "")
    version = "" if op == "Apply" else entry.get("apiVersion", "")
    return (entry.get("manager", ""), op, version, entry.get("subresource", ""))


def sort_key(entry: Entry) -> tuple[str, str, str, str, str]:
    return (
        entry.get("operation", ""),
        entry.get("time", ""),
        entry.get("manager", ""),
        entry.get("apiVersion", ""),
        entry.get("subresource", ""),
    )


def track(
    kind: Kind,
    old: dict[str, Any] | None,
    new: dict[str, Any],
    write: Write | None,
    sent: Any = _MISSING,
    subresource: str | None = None,
) -> None:
    """Sets new's managedFields after `write` turned `old` (None: a create) into `new`.

    A write without a manager (kubesim's own controllers) takes the fields it changes from
    their managers but records no entry of its own (`subresource`: the one it writes)."""
    meta = new["metadata"]
    in_new = meta.pop("managedFields", _MISSING)
    if sent is _MISSING:  # what the client sent, before decoding dropped an empty list
        sent = in_new
    live = (old["metadata"].get("managedFields") or []) if old is not None else []
    main = (write.subresource if write is not None else subresource) is None
    if write is not None and write.applied is None and main and _is_reset(sent):
        return  # [] or [{}]: the client clears them, and this write is not tracked
    base = decoded(sent if main and sent is not _MISSING and sent and _valid(sent) else live)
    if write is None:
        base = live  # kubesim's controllers carry what they read
    if not base and (write is None or (old is not None and write.applied is None)):
        return  # an object without managedFields is not tracked until it is applied
    # Without an entry of its own, the write changes the others' only where they own fields.
    # (Where it changed only fields no one owns, the list stays as it is: a stored list is
    # already sorted and without empty entries, what the loop below would make of it.)
    scope = _scope(base) if write is None else None
    changed, removed = _root_diff(kind, old, new, main, scope)
    if write is None and changed is None and removed is None:
        if base:
            meta["managedFields"] = base
        return
    apply_set = applied_fields(kind, write.applied) if write and write.applied else None
    taken = changed  # an apply shares the fields it sets to the value they have
    mine = None
    if write is not None:
        op = "Apply" if write.applied is not None else "Update"
        version = "" if op == "Apply" else write.api_version
        mine = (write.manager, op, version, write.subresource or "")
    out: list[Entry] = []
    previous: Entry | None = None
    for entry in base:
        if not isinstance(entry, dict):
            continue
        if mine is not None and identity(entry) == mine:
            previous = entry
            continue
        fields = difference(difference(entry.get("fieldsV1") or None, taken), removed)
        if fields is None:
            continue
        if fields is not entry.get("fieldsV1"):
            entry = {**entry, "fieldsV1": fields}
        out.append(entry)
    if write is not None and mine is not None:
        own = _own_entry(write, mine[1], previous, changed, removed, apply_set)
        if own is not None:
            out.append(own)
        if len(out) > MAX_UPDATE_MANAGERS and mine[1] == "Update":
            out = _cap_updates(out)
    if out:
        out.sort(key=sort_key)
        meta["managedFields"] = out


def _own_entry(
    write: Write,
    op: str,
    previous: Entry | None,
    changed: Fields | None,
    removed: Fields | None,
    apply_set: Fields | None,
) -> Entry | None:
    before = difference(previous.get("fieldsV1") or None, removed) if previous else None
    if op == "Apply":
        fields = apply_set
        touched = previous is None or fields != previous.get("fieldsV1") or changed is not None
    else:
        fields = union(before, changed)
        touched = changed is not None
    if fields is None:
        return None
    if not touched and previous is not None:
        return previous if fields == previous.get("fieldsV1") else {**previous, "fieldsV1": fields}
    if op == "Apply" and changed is None and removed is None:
        when = previous.get("time") if previous else None  # the object is as it was: no time
    else:
        when = None if write.subresource == "scale" else _now()  # v1.28 loses a scale write's
    return new_entry(
        write.manager, op, write.api_version, fields, when=when, subresource=write.subresource
    )


def new_entry(
    manager: str,
    operation: str,
    api_version: str,
    fields: Fields,
    *,
    when: str | None = None,
    subresource: str | None = None,
) -> Entry:
    """An entry, its keys in the server's order; a time and a subresource only if given."""
    entry: Entry = {"manager": manager, "operation": operation, "apiVersion": api_version}
    if when:
        entry["time"] = when
    entry["fieldsType"] = "FieldsV1"
    entry["fieldsV1"] = fields
    if subresource:
        entry["subresource"] = subresource
    return entry


def go_identifier(entry: Entry) -> str:
    """BuildManagerIdentifier: the JSON Go makes of an entry's identity (an Apply's without
    its version), by which the server orders managers."""
    names = ("manager", "operation", "apiVersion", "subresource")
    ident = {k: v for k, v in zip(names, identity(entry), strict=True) if v}
    return html_escaped(compact(ident))


def decoded(entries: list[Any]) -> list[Any]:
    """DecodeManagedFields keys the entries by identity: of two with the same (a scale write
    splits one so), the last is kept."""
    if len(entries) < 2:
        return entries
    by_id = {identity(e): e for e in entries if isinstance(e, dict)}
    return entries if len(by_id) == len(entries) else list(by_id.values())


def _cap_updates(entries: list[Entry]) -> list[Entry]:
    """capUpdateManagers: while more than 10 Update entries are left, the oldest (by second,
    then identifier) are merged, per apiVersion, into an `ancient-changes` entry of that
    version (no subresource) with the time of the last one merged. Kept as Go does it: the
    first entry of a version is merged only once a second one is, and a bucket that is not
    the first of its version is merged into itself, then dropped, fields and all."""
    updaters = [e for e in entries if e.get("operation") != "Apply"]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return entries
    updaters.sort(key=lambda e: (e.get("time") or "", go_identifier(e)))
    by_id = {identity(e): e for e in entries}
    first: dict[str, tuple[str, str, str, str]] = {}
    length = len(updaters)
    for entry in updaters:
        if length <= MAX_UPDATE_MANAGERS:
            break
        version = entry.get("apiVersion", "")
        if version not in first:
            first[version] = identity(entry)
            continue
        bucket = (ANCIENT_CHANGES, "Update", version, "")
        merged = by_id.get(bucket) or by_id.pop(first[version], None) or {}
        fields = union(entry.get("fieldsV1") or None, merged.get("fieldsV1") or None)
        when = entry.get("time")
        by_id[bucket] = new_entry(ANCIENT_CHANGES, "Update", version, fields or {}, when=when)
        del by_id[identity(entry)]  # the bucket itself, when it was not the first
        length -= 1
    return list(by_id.values())
