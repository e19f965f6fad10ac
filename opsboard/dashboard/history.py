"""A CR's change history, and the plans that revert a change or explain a conflict.

The mirror's spec versions say what changed at each generation, and who wrote it where the
API reports field managers; the audit says which of those changes were made through
opsboard, by whom. Reads only: the review and the apply are patching.py's.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.http import Http404

from opsboard.audit.models import AuditEntry
from opsboard.dashboard.claims import shrink_refusal
from opsboard.mirror.history import (
    fields_diff,
    spec_diff,
    spec_reverted,
    spec_version_before,
    spec_versions,
)
from opsboard.mirror.models import KubeObject, SpecVersion

Diff = list[tuple[str, Any, Any]]


@dataclass(frozen=True)
class HistoryEntry:
    change: str  # what a revert names: "v<SpecVersion id>" or "a<AuditEntry id>"
    generation: int | None
    at: datetime
    by: str  # "otto (entry 12)", "kubectl-edit", "outside opsboard"
    through_opsboard: bool
    entry: AuditEntry | None
    diff: Diff
    first: bool = False  # the first version seen: nothing to diff or revert
    unrevertable: str = ""  # why its revert would be refused (it would shrink a claim)


def _by(entry: AuditEntry | None, version: SpecVersion | None) -> str:
    if entry is not None:
        return f"{entry.username} through opsboard (entry {entry.pk})"
    if version is not None and version.manager:
        return f"{version.manager} (field manager)"
    return "outside opsboard (the API reported no field manager)"


def cr_history(
    *, cr: KubeObject, limit: int = 30, storage_path: str | None = None
) -> list[HistoryEntry]:
    """Newest first: each spec change with its field-level diff and who made it; with the
    kind's `storage_path`, a change whose revert would shrink a claim says so."""
    versions = spec_versions(uid=cr.uid, limit=limit + 1)
    entries = {
        e.generation: e
        for e in AuditEntry.objects.filter(
            uid=cr.uid, action=AuditEntry.Action.PATCH, result=AuditEntry.Result.APPLIED
        ).order_by("at")
        if e.generation is not None
    }
    history = []
    for version, before in zip(versions, [*versions[1:], None][: len(versions)], strict=True):
        entry = entries.pop(version.generation, None)
        first = before is None and version is versions[-1] and len(versions) <= limit
        if before is None and not first:
            continue  # beyond the limit: its predecessor is not loaded
        history.append(
            HistoryEntry(
                f"v{version.pk}",
                version.generation,
                version.seen_at,
                _by(entry, version),
                entry is not None,
                entry,
                [] if before is None else spec_diff(before.spec, version.spec),
                first=first,
            )
        )
    # Changes made through opsboard that the mirror did not see as a version of their own.
    for entry in entries.values():
        diff = fields_diff(entry.before, entry.after)
        history.append(
            HistoryEntry(
                f"a{entry.pk}", entry.generation, entry.at, _by(entry, None), True, entry, diff
            )
        )
    history = sorted(history, key=lambda h: (h.generation or 0, h.at), reverse=True)[:limit]
    if storage_path is None:
        return history
    claims = {"status": cr.status or {}}
    return [
        replace(h, unrevertable=why) if (why := _shrinks(h.diff, storage_path, claims)) else h
        for h in history
    ]


def _shrinks(diff: Diff, storage_path: str, claims: dict[str, Any]) -> str:
    """Why setting `diff`'s old values back would shrink a claim, or ""."""
    old = next((before for path, before, _ in diff if path == storage_path), None)
    why = shrink_refusal(storage_path, old, claims, advise=False) if old is not None else ""
    return f"Its revert would be refused: {why}" if why else ""


@dataclass(frozen=True)
class RevertPlan:
    changes: dict[str, Any]  # {"spec.image": "memcached:1.6"}: the values before the change
    reverts: AuditEntry | None
    reverts_generation: int | None
    label: str  # "entry 12" / "the change to generation 4"


def revert_plan(*, cr: KubeObject, change: str) -> RevertPlan:
    """The patch that undoes one change: each field it changed set back to its old value
    (None removes a field it added). Later changes of other fields are kept."""
    number = change[1:]
    if not number.isdigit() or change[:1] not in ("v", "a"):
        raise Http404(f"No change {change!r} in this history")
    if change[0] == "v":
        version = SpecVersion.objects.filter(pk=int(number), uid=cr.uid).first()
        before = spec_version_before(version) if version else None
        if version is None or before is None:
            raise Http404(f"No change {change!r} to revert in this history")
        entry = AuditEntry.objects.filter(
            uid=cr.uid, generation=version.generation, result=AuditEntry.Result.APPLIED
        ).first()
        changes = spec_reverted(before.spec, version.spec)
        label = f"entry {entry.pk}" if entry else f"the change to generation {version.generation}"
        return RevertPlan(changes, entry, version.generation, label)
    entry = AuditEntry.objects.filter(
        pk=int(number), uid=cr.uid, action=AuditEntry.Action.PATCH,
        result=AuditEntry.Result.APPLIED,
    ).first()  # fmt: skip
    if entry is None:
        raise Http404(f"No change {change!r} to revert in this history")
    return RevertPlan(dict(entry.before), entry, entry.generation, f"entry {entry.pk}")


@dataclass(frozen=True)
class ConflictReport:
    """What changed between the review and the refused apply."""

    reviewed_generation: int
    generation: int  # the object's now
    diff: Diff = field(default_factory=list)  # spec fields that moved meanwhile
    by: list[str] = field(default_factory=list)  # who made those changes, where known

    @property
    def spec_changed(self) -> bool:
        return self.generation != self.reviewed_generation


def conflict_report(
    *, cr: KubeObject, reviewed_generation: int, generation: int, spec: dict[str, Any]
) -> ConflictReport:
    """Compares the spec reviewed (the mirror's version of that generation) with `spec`,
    the object's now, and names the writers of the versions in between."""
    if generation == reviewed_generation:
        return ConflictReport(reviewed_generation, generation)
    versions = list(
        SpecVersion.objects.filter(uid=cr.uid, generation__gte=reviewed_generation).order_by(
            "generation"
        )
    )
    reviewed = next((v for v in versions if v.generation == reviewed_generation), None)
    entries = {
        e.generation: e
        for e in AuditEntry.objects.filter(
            uid=cr.uid, generation__gt=reviewed_generation, result=AuditEntry.Result.APPLIED
        )
    }
    by = [
        f"generation {v.generation}: {_by(entries.get(v.generation), v)}"
        for v in versions
        if v.generation > reviewed_generation
    ]
    diff = spec_diff(reviewed.spec, spec) if reviewed else []
    return ConflictReport(reviewed_generation, generation, diff, by)
