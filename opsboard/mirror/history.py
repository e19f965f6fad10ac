"""The spec history of the CRs: one SpecVersion per generation the watcher sees.

Kept by the watcher as it mirrors the primary kinds, so a spec changed with kubectl or by
GitOps is in the history as well as one changed through opsboard. The diff of a change is
the spec of its generation against the one before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import Q
from django.utils import timezone

from controllers.base import Body
from opsboard.mirror.models import SpecVersion
from opsboard.mirror.writer import DELETED, Change, SpecWriter

KEEP_PER_OBJECT = 100


def spec_versions_record(changes: Sequence[Change]) -> int:
    """Records the spec of every change that brings a generation the mirror had not seen
    (a new object, or a spec change). One insert for the batch; returns how many."""
    now = timezone.now()
    new = [
        change
        for change in changes
        if change.type != DELETED
        and (
            change.previous is None
            or change.previous.generation != int(change.body["metadata"].get("generation") or 0)
        )
    ]
    before = _specs_before(new)
    rows = []
    for change in new:
        meta = change.body["metadata"]
        generation = int(meta.get("generation") or 0)
        spec = change.body.get("spec") or {}
        previous = before.get(meta["uid"]) if change.previous else {}
        rows.append(
            SpecVersion(
                uid=meta["uid"],
                api_version=change.kind.api_version,
                kind=change.kind.kind,
                namespace=meta.get("namespace", ""),
                name=meta["name"],
                generation=generation,
                spec=spec,
                manager=changed_by(change.spec_writers, previous, spec)[:128],
                seen_at=now,
            )
        )
    if rows:
        SpecVersion.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def _specs_before(changes: Sequence[Change]) -> dict[str, Body]:
    """The recorded spec of each changed object's previous generation, in one query."""
    pairs = [(c.body["metadata"]["uid"], c.previous.generation) for c in changes if c.previous]
    if not pairs:
        return {}
    query = Q(pk__in=[])
    for uid, generation in pairs:
        query |= Q(uid=uid, generation=generation)
    return dict(SpecVersion.objects.filter(query).values_list("uid", "spec"))


def changed_by(writers: Sequence[SpecWriter], before: Body | None, after: Body) -> str:
    """Who made a spec change: the managers that own the fields it changed (an Update takes
    the fields it sets from their former owner). With no earlier spec to compare, the
    latest writer by time. A /scale write's entry has no time, so time alone would credit
    the writer before it."""
    if before is not None:
        changed = _changed(before, after)
        # A manager that holds a changed key itself made the change; one holding only the
        # map above it holds it whole (an atomic map), or held it before the keys were
        # taken from it (the Update that changes a key takes it): credited only if no one
        # holds a key itself.
        held = [(w.manager, _holds(w.fields, path)) for w in writers for path in changed]
        owners = [m for m, how in held if how == "itself"] or [m for m, how in held if how]
        if owners:
            return ", ".join(dict.fromkeys(owners))
    timed = [w for w in writers if w.time]
    return max(timed, key=lambda w: w.time).manager if timed else ""


def _changed(before: Body, after: Body) -> list[tuple[str, ...]]:
    """The key paths of the leaves that differ between two specs, in order."""
    old, new = _leaves(before or {}), _leaves(after or {})
    return sorted(path for path in old.keys() | new.keys() if old.get(path) != new.get(path))


def _leaves(value: Any, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    """A spec's leaves by key path (keys may hold dots: kubernetes.io/os)."""
    if isinstance(value, dict) and value:
        leaves: dict[tuple[str, ...], Any] = {}
        for key, child in value.items():
            leaves.update(_leaves(child, (*path, key)))
        return leaves
    return {path: value}


def _holds(fields: Body, path: tuple[str, ...]) -> str:
    """How a fieldsV1 tree under f:spec holds `path`: "itself", "above" (a value above it
    held whole), or "" (not at all)."""
    node = fields
    for key in path:
        if node == {}:
            return "above"
        child = node.get(f"f:{key}")
        if child is None:
            return ""
        node = child
    return "itself"


def spec_versions(*, uid: str, limit: int = KEEP_PER_OBJECT) -> list[SpecVersion]:
    """An object's versions, newest first."""
    return list(SpecVersion.objects.filter(uid=uid).order_by("-generation")[:limit])


def spec_version_before(version: SpecVersion) -> SpecVersion | None:
    return (
        SpecVersion.objects.filter(uid=version.uid, generation__lt=version.generation)
        .order_by("-generation")
        .first()
    )


def flatten(value: Any, prefix: str) -> dict[str, Any]:
    """{"a": {"b": 1}} → {"spec.a.b": 1}: the leaves of a spec as dotted paths."""
    return {".".join((prefix, *path)): leaf for path, leaf in _leaves(value).items()}


def spec_diff(before: Body, after: Body) -> list[tuple[str, Any, Any]]:
    """Every leaf of two specs that differs, as (dotted path, old, new); absent is None."""
    return _diff(flatten(before or {}, "spec"), flatten(after or {}, "spec"))


def fields_diff(before: Body, after: Body) -> list[tuple[str, Any, Any]]:
    """spec_diff of two {dotted path: value} maps (an audit entry's), a map value's leaves
    each on a row of its own."""
    return _diff(_flat_fields(before), _flat_fields(after))


def _flat_fields(fields: Body) -> dict[str, Any]:
    return {k: v for path, value in fields.items() for k, v in flatten(value, path).items()}


def _diff(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    return [(k, old.get(k), new.get(k)) for k in sorted(old | new) if old.get(k) != new.get(k)]


def spec_reverted(before: Body, after: Body) -> dict[str, Any]:
    """What sets back each field that differs from `before` to `after`, as {dotted path:
    old value} (None removes a field added). A path goes no deeper than a key with a dot in
    it (a label's, kubernetes.io/os), which no dotted path can name: that key's map is set
    back whole."""
    reverted: dict[str, Any] = {}
    for path in _changed(before, after):
        cut = next((i for i, key in enumerate(path) if "." in key), len(path))
        reverted[".".join(("spec", *path[:cut]))] = _at(before or {}, path[:cut])
    return reverted


def _at(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value
