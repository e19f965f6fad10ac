"""Server-side apply's field ownership, as structured-merge-diff's Updater.Apply keeps it
for kube-apiserver v1.28: an apply may not change a field another manager owns (409
Conflict, unless forced), and the fields its manager alone applied last time and dropped
now are removed from the object.

Both run on the merged object before it is decoded and stored; managedfields.track then
records the entries (a forced apply's changed fields leave their other owners there).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kubesim import errors, managedfields
from kubesim.gojson import compact, go_quote
from kubesim.managedfields import Entry, Fields, Kind


@dataclass(frozen=True, slots=True)
class Applier:
    """The apply being made: its manager's Apply entry is the one it replaces."""

    manager: str
    subresource: str | None

    def owns(self, entry: Entry) -> bool:
        return managedfields.identity(entry) == (self.manager, "Apply", "", self.subresource or "")


@dataclass(frozen=True, slots=True)
class Conflict:
    manager: str  # printManager's words: "A" using v1
    order: str  # the manager's identifier, which orders the message as the server's map
    field: str  # the path as structured-merge-diff prints it: .spec.containers[name="c"]


def check_conflicts(
    kind: Kind,
    old: dict[str, Any],
    merged: dict[str, Any],
    applier: Applier,
) -> None:
    """Refuse (409) an apply that changes or adds fields other managers own."""
    changed = managedfields.changed_fields(kind, old, merged, applier.subresource)
    if changed is None:
        return
    found: list[Conflict] = []
    for entry in _entries(old):
        if applier.owns(entry):
            continue
        shared = managedfields.intersection(entry.get("fieldsV1") or None, changed)
        if shared is not None:
            who, order = _print_manager(entry), managedfields.go_identifier(entry)
            found += [Conflict(who, order, path) for path in _paths(shared, "")]
    if found:
        raise conflict_error(sorted(found, key=lambda c: c.order))  # stable: paths stay in order


def prune(
    kind: Kind,
    old: dict[str, Any],
    merged: dict[str, Any],
    applier: Applier,
    applied: dict[str, Any],
) -> None:
    """Remove from `merged` what the applier owned by its last apply and no longer applies,
    unless another manager owns it too."""
    entries = _entries(old)
    last = next((e.get("fieldsV1") for e in entries if applier.owns(e)), None)
    if not last:
        return
    dropped = managedfields.difference(last, managedfields.applied_fields(kind, applied))
    for entry in entries:
        if not applier.owns(entry):
            dropped = managedfields.difference(dropped, entry.get("fieldsV1") or None)
    if dropped is not None:
        _remove(merged, dropped)


def conflict_error(conflicts: list[Conflict]) -> errors.ApiError:
    """apimachinery's NewConflictError: one cause per field, and a message grouped by manager."""
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {c.manager}",
            "field": c.field,
        }
        for c in conflicts
    ]
    if len(conflicts) == 1:
        (c,) = conflicts
        message = f"Apply failed with 1 conflict: conflict with {c.manager}: {c.field}"
    else:
        lines: list[str] = []
        for c in conflicts:
            heading = f"conflicts with {c.manager}:"
            if heading not in lines:
                lines.append(heading)
            lines.append(f"- {c.field}")
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return errors.ApiError(409, "Conflict", message, {"causes": causes})


# --- managers ------------------------------------------------------------------------------


def _entries(obj: dict[str, Any]) -> list[Entry]:
    managed = managedfields.decoded(obj["metadata"].get("managedFields") or [])
    return [e for e in managed if isinstance(e, dict)]


def conflict_with(entry: Entry, field: str) -> Conflict:
    """The conflict of an apply with the manager of `entry` over `field`."""
    return Conflict(_print_manager(entry), managedfields.go_identifier(entry), field)


def _print_manager(entry: Entry) -> str:
    """printManager: an Update names its version (its identifier has no time to print)."""
    text = go_quote(str(entry.get("manager", "")))
    if entry.get("subresource"):
        text += f" with subresource {go_quote(str(entry['subresource']))}"
    if entry.get("operation") == "Update":
        text += f" using {entry.get('apiVersion', '')}"
    return text


# --- paths ---------------------------------------------------------------------------------


def _paths(fields: Fields, prefix: str) -> Iterator[str]:
    """Set.Iterate's order: a node's members, then its children, each sorted as PathElements."""
    keys = sorted((k for k in fields if k != "."), key=_element_order)
    for k in keys:
        if not fields[k] or "." in fields[k]:
            yield prefix + _element(k)
    for k in keys:
        if any(sub != "." for sub in fields[k]):
            yield from _paths(fields[k], prefix + _element(k))


def _element(key: str) -> str:
    """A fieldsV1 key as PathElement.String prints it."""
    tag, text = key[:2], key[2:]
    if tag == "f:":
        return "." + text
    if tag == "k:":
        picked = json.loads(text)
        return "[" + ",".join(f"{k}={compact(v)}" for k, v in picked.items()) + "]"
    if tag == "v:":
        return f"[={text}]"
    return f"[{text}]"  # i:<index>


def _element_order(key: str) -> tuple[int, Any]:
    """PathElement.Compare: field names, then keys (fewer fields first), values, indexes."""
    tag, text = key[:2], key[2:]
    if tag == "f:":
        return (0, text)
    if tag == "k:":
        picked = json.loads(text)
        return (1, (len(picked), [(k, _value_order(v)) for k, v in picked.items()]))
    if tag == "v:":
        return (2, _value_order(json.loads(text)))
    return (3, int(text) if text.isdigit() else 0)


def _value_order(value: Any) -> tuple[int, Any]:
    if isinstance(value, bool) or value is None:
        return (0, str(value))
    if isinstance(value, (int, float)):
        return (1, value)
    return (2, json.dumps(value, sort_keys=True))


# --- removing what was dropped -------------------------------------------------------------


def _remove(value: Any, fields: Fields) -> None:
    """Remove the members of `fields` from `value`; a map or list it empties goes too, as
    the named field it was (the real server removes it whole)."""
    for key, sub in fields.items():
        if key == ".":
            continue
        whole = not sub or "." in sub
        if isinstance(value, dict) and key.startswith("f:") and key[2:] in value:
            name = key[2:]
            if whole:
                del value[name]
            elif isinstance(value[name], (dict, list)):
                _remove(value[name], sub)
                if not value[name]:
                    del value[name]
        elif isinstance(value, list):
            _remove_items(value, key, sub, whole)


def _remove_items(items: list[Any], key: str, sub: Fields, whole: bool) -> None:
    for i in reversed(range(len(items))):
        if not _matches(items[i], key):
            continue
        if whole:
            del items[i]
        elif isinstance(items[i], (dict, list)):
            _remove(items[i], sub)


def _matches(item: Any, key: str) -> bool:
    tag, text = key[:2], key[2:]
    if tag == "k:":
        picked = json.loads(text)
        return isinstance(item, dict) and all(item.get(k) == v for k, v in picked.items())
    if tag == "v:":
        return bool(item == json.loads(text))
    return False
