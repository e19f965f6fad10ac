"""Patching a CR's sizes, images, resources, NodePort, devices or volume size: review with a
server-side dry run, then apply a merge patch conditioned on the reviewed resourceVersion.
Every apply is audited. A volume size below what the claims hold is refused at both steps
(claims.py): the API server would take it, and only the operator would refuse it, afterwards.
A growth their StorageClass does not allow is told at the review (storage_classes.py).

A change of the size alone, where the CRD declares a scale subresource, goes through
`/scale` (its specReplicasPath is the size), as `kubectl scale` and autoscalers do: the
same dry run, the same resourceVersion guard."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone

from controllers.base import Body
from opsboard.accounts.kube_identity import KubeIdentity
from opsboard.audit.models import AuditEntry
from opsboard.audit.services import audit_record
from opsboard.dashboard import crclient
from opsboard.dashboard.claims import shrink_refusal
from opsboard.dashboard.gone import deleted_refusal
from opsboard.dashboard.kinds import KindInfo, value_at
from opsboard.dashboard.storage_classes import growth_warnings
from opsboard.mirror.history import spec_diff

CHANGED_SINCE = "The object changed since you looked at it — review again."


@dataclass
class Review:
    """What a dry run says the patch would do."""

    resource_version: str = ""
    before: dict[str, Any] = field(default_factory=dict)  # {"spec.size": 3}
    after: dict[str, Any] = field(default_factory=dict)  # {"spec.size": 5}
    diff: list[tuple[str, Any, Any]] = field(default_factory=list)  # every changed spec field
    error: str = ""
    generation: int = 0  # of the object reviewed: a conflict is explained from there
    spec: dict[str, Any] = field(default_factory=dict)  # the live spec reviewed
    via_scale: bool = False  # sent to the scale subresource
    warnings: list[str] = field(default_factory=list)  # what may keep it from taking effect
    # Fields the cluster refuses as they stand, which the change does not touch (a CRD's
    # schema tightened since they were set): the form marks those it has.
    untouched: tuple[str, ...] = ()


def _merge_patch(changes: dict[str, Any], resource_version: str, live: Body) -> Body:
    """{"spec.size": 5} → {"metadata": {"resourceVersion": rv}, "spec": {"size": 5}}.

    A resourceVersion in a merge patch makes the API server refuse it with 409 when the
    object has moved on: optimistic concurrency without a read-modify-write. A map given
    (a node selector) replaces `live`'s whole: a merge patch merges maps, so each key it
    no longer has is sent as null, which removes it."""
    patch: Body = {"metadata": {"resourceVersion": resource_version}}
    for path, value in changes.items():
        node = patch
        *parents, leaf = path.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = _replacing(value, value_at(live, path))
    return patch


def _replacing(new: Any, old: Any) -> Any:
    """`new` as a merge patch that leaves exactly `new` where `old` is."""
    if not isinstance(new, dict) or not isinstance(old, dict):
        return new
    return {key: None for key in old if key not in new} | {
        key: _replacing(value, old.get(key)) for key, value in new.items()
    }


def via_scale(info: KindInfo, changes: dict[str, Any]) -> bool:
    """Whether `changes` (spec path → value) go through `/scale`: a size alone, where the
    CRD's scale subresource names it."""
    return info.replicas_path is not None and list(changes) == [info.replicas_path]


def _send(
    info: KindInfo,
    namespace: str,
    name: str,
    changes: dict[str, Any],
    rv: str,
    *,
    live: Body,
    dry_run: bool,
    as_user: KubeIdentity | None,
) -> Body:
    """Sends the change, by /scale when it is a size alone; returns the CR as changed."""
    if not via_scale(info, changes):
        patch = _merge_patch(changes, rv, live)
        return crclient.cr_merge_patch(
            info.kind, namespace, name, patch, dry_run=dry_run, as_user=as_user
        )
    [(path, size)] = changes.items()
    scale = {"metadata": {"resourceVersion": rv}, "spec": {"replicas": size}}
    result = crclient.cr_scale_patch(
        info.kind, namespace, name, scale, dry_run=dry_run, as_user=as_user
    )
    if dry_run:  # a Scale comes back: the CR as it would be is the live one, resized
        return _with_value(live, path, result["spec"]["replicas"])
    # its new generation, for the audit: read as opsboard (applied, whatever the person may read)
    return crclient.cr_read(info.kind, namespace, name, as_user=None)


def _with_value(body: Body, path: str, value: Any) -> Body:
    changed = copy.deepcopy(body)
    node = changed
    *parents, leaf = path.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value
    return changed


def cr_patch_review(
    *, info: KindInfo, namespace: str, name: str, changes: dict[str, Any],
    as_user: KubeIdentity | None = None,
) -> Review:  # fmt: skip
    """Read the live object and dry-run the patch against it; nothing is persisted.
    `as_user`: the person to impersonate (the cluster's RBAC then decides)."""
    try:
        if as_user and (refused := crclient.access_refusal(
            info.kind, namespace, "patch", as_user=as_user,
            subresource="scale" if via_scale(info, changes) else "",
        )):  # fmt: skip
            return Review(error=refused)
        live = crclient.cr_read(info.kind, namespace, name, as_user=as_user)
        rv = live["metadata"]["resourceVersion"]
        dry = _send(info, namespace, name, changes, rv, live=live, dry_run=True, as_user=as_user)
    except crclient.ClusterError as exc:
        if exc.gone:
            return Review(error=deleted_refusal(info, namespace, name))
        untouched = _untouched(changes, exc)
        return Review(error=_invalid_as_is(untouched, exc) or str(exc), untouched=untouched)
    storage = info.controller.fields.storage
    warnings = []
    if (size := value_at(dry, storage)) != value_at(live, storage):
        if shrinks := _shrinks(info, live, size):
            return Review(error=shrinks)  # a revert of a growth, for one
        warnings = growth_warnings(live)
    return Review(
        resource_version=rv,
        before={path: value_at(live, path) for path in changes},
        after={path: value_at(dry, path) for path in changes},
        diff=spec_diff(live.get("spec") or {}, dry.get("spec") or {}),
        generation=int(live["metadata"].get("generation") or 0),
        spec=live.get("spec") or {},
        via_scale=via_scale(info, changes),
        warnings=warnings,
    )


@dataclass(frozen=True)
class Applied:
    entry: AuditEntry
    conflict: bool = False
    forbidden: bool = False  # the cluster's RBAC refused it (403)

    @property
    def ok(self) -> bool:
        return self.entry.result == AuditEntry.Result.APPLIED


def cr_patch_apply(
    *,
    user: User,
    info: KindInfo,
    namespace: str,
    name: str,
    changes: dict[str, Any],
    resource_version: str,
    as_user: KubeIdentity | None = None,
    reverts: AuditEntry | None = None,
    reverts_generation: int | None = None,
) -> Applied:
    """Send the reviewed patch; a concurrent change is refused (409), never overwritten.

    The `before` values are read from the cluster, not taken from the form, so the audit
    cannot be told a story; the patch's resourceVersion guarantees they are what changed.
    They are read as opsboard, not as the person: a refusal is then the patch's own, and
    its entry still has the object's uid and before values."""
    record: dict[str, Any] = {
        "user": user, "action": AuditEntry.Action.PATCH, "info": info,
        "namespace": namespace, "name": name, "after": changes, "asked_at": timezone.now(),
        "reverts": reverts, "reverts_generation": reverts_generation, "as_user": as_user,
    }  # fmt: skip
    try:
        live = crclient.cr_read(info.kind, namespace, name, as_user=None)
        record["before"] = {path: value_at(live, path) for path in changes}
        record["uid"] = live["metadata"].get("uid", "")
        storage = info.controller.fields.storage
        if storage in changes and (shrinks := _shrinks(info, live, changes[storage])):
            entry = audit_record(**record, result=AuditEntry.Result.REJECTED, message=shrinks)
            return Applied(entry)
        body = _send(
            info, namespace, name, changes, resource_version, live=live, dry_run=False,
            as_user=as_user,
        )  # fmt: skip
    except crclient.ClusterError as exc:
        message = CHANGED_SINCE if exc.conflict else _invalid_as_is(_untouched(changes, exc), exc)
        message = message or str(exc)
        if exc.gone:  # deleted, and the mirror had not seen it yet
            message = deleted_refusal(info, namespace, name)
        if exc.forbidden and as_user is not None:
            message = _forbidden(info, namespace, changes, as_user, exc.forbidden)
        result = AuditEntry.Result.FAILED if exc.unreachable else AuditEntry.Result.REJECTED
        entry = audit_record(**record, result=result, message=message)
        return Applied(entry, exc.conflict, forbidden=bool(exc.forbidden))
    generation = body.get("metadata", {}).get("generation")
    entry = audit_record(
        **record,
        result=AuditEntry.Result.APPLIED,
        generation=generation,
        message=(
            f"{_revert_note(reverts, reverts_generation)}"
            f"{'Scaled through /scale' if via_scale(info, changes) else 'Patched'} "
            f"to generation {generation}"
        ),
    )
    return Applied(entry)


def _untouched(changes: dict[str, Any], exc: crclient.ClusterError) -> tuple[str, ...]:
    """The fields a 422 names, if the change touches none of them (else ())."""
    touched = [f for f in exc.invalid if any(_touches(path, f) for path in changes)]
    return () if touched else exc.invalid


def _touches(path: str, refused: str) -> bool:
    """Whether setting `path` sets the field `refused` (spec.ports[0].nodePort), or a part
    of it."""
    return (
        refused == path
        or refused.startswith((f"{path}.", f"{path}["))
        or (path.startswith(f"{refused}."))
    )


def _invalid_as_is(untouched: tuple[str, ...], exc: crclient.ClusterError) -> str:
    """A 422 about fields the change leaves as they are: the object is refused as it stands."""
    if not untouched:
        return ""
    named = ", ".join(untouched)
    return (
        f"The cluster refused the change, and nothing was changed: the object as it stands "
        f"is invalid in {named}, which this change does not touch. The CRD's schema refuses "
        "its current value (most likely set before the schema changed), and Kubernetes checks "
        f"the whole object whenever its spec changes. Set {named} to a valid value along with "
        f"this change. (The API server said: {exc.said})"
    )


def _shrinks(info: KindInfo, live: Body, size: Any) -> str:
    """The refusal of a volume size below `live`'s claims, "" if it is none."""
    path = info.controller.fields.storage
    if path is None or not (why := shrink_refusal(path, size, live)):
        return ""
    return f"Nothing was changed: {why}"


def _forbidden(
    info: KindInfo, namespace: str, changes: dict[str, Any], as_user: KubeIdentity, said: str
) -> str:
    """The cluster's 403 to the patch sent as the person: who it saw, what it refused, what
    to do; the API server's own words last."""
    subresource = "scale" if via_scale(info, changes) else ""
    return (
        "The cluster refused the patch; nothing was changed: "
        + crclient.rbac_refusal(
            info.kind, namespace, "patch", who=as_user.describe(), subresource=subresource
        )
        + f" (The API server said: {said})"
    )


def _revert_note(reverts: AuditEntry | None, generation: int | None) -> str:
    if reverts is not None:
        return f"Revert of entry {reverts.pk}. "
    if generation is not None:
        return f"Revert of the change to generation {generation}. "
    return ""
