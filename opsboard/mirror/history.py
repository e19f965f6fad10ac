"""The spec history of the CRs: one SpecVersion per generation the watcher sees.

Kept by the watcher as it mirrors the primary kinds, so a spec changed with kubectl or by
GitOps is in the history as well as one changed through opsboard. The diff of a change is
the spec of its generation against the one before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils import timezone

from controllers.base import Body
from opsboard.mirror.models import SpecVersion
from opsboard.mirror.writer import DELETED, Change

KEEP_PER_OBJECT = 100


def spec_versions_record(changes: Sequence[Change]) -> int:
    """Records the spec of every change that brings a generation the mirror had not seen
    (a new object, or a spec change). One insert for the batch; returns how many."""
    now = timezone.now()
    rows = []
    for change in changes:
        if change.type == DELETED:
            continue
        meta = change.body["metadata"]
        generation = int(meta.get("generation") or 0)
        if change.previous is not None and change.previous.generation == generation:
            continue
        rows.append(
            SpecVersion(
                uid=meta["uid"],
                api_version=change.kind.api_version,
                kind=change.kind.kind,
                namespace=meta.get("namespace", ""),
                name=meta["name"],
                generation=generation,
                spec=change.body.get("spec") or {},
                manager=change.spec_manager[:128],
                seen_at=now,
            )
        )
    if rows:
        SpecVersion.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


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
    if isinstance(value, dict) and value:
        flat: dict[str, Any] = {}
        for key, child in value.items():
            flat.update(flatten(child, f"{prefix}.{key}"))
        return flat
    return {prefix: value}


def spec_diff(before: Body, after: Body) -> list[tuple[str, Any, Any]]:
    """Every leaf of two specs that differs, as (dotted path, old, new); absent is None."""
    old, new = flatten(before or {}, "spec"), flatten(after or {}, "spec")
    return [(k, old.get(k), new.get(k)) for k in sorted(old | new) if old.get(k) != new.get(k)]
