"""Helpers the workload controllers share for writing what they own."""

from __future__ import annotations

import random

from kubesim.cluster import names
from kubesim.cluster.api import is_status_error
from kubesim.cluster.cache import controller_uid
from kubesim.cluster.controller import Context, Obj, controller_ref
from kubesim.cluster.selectors import labels_of, matches_selector


def create_with_random_name(
    ctx: Context, rng: random.Random, resource: str, obj: Obj, base: str
) -> Obj:
    """generateName, but seeded: `<base>-<5 chars>`, retried on the rare collision."""
    obj["metadata"]["generateName"] = f"{base}-"
    for _ in range(10):
        obj["metadata"]["name"] = f"{base}-{names.random_suffix(rng)}"
        try:
            return ctx.api.create(resource, obj)
        except Exception as exc:
            if not is_status_error(exc, 409):
                raise
    raise RuntimeError(f"no free name for {base}-")


def min_ready_seconds(workload: Obj) -> int:
    """How long a workload's ready pod must stay ready to count as available."""
    return int(workload["spec"].get("minReadySeconds") or 0)


def drop_zero(status: Obj, keep: tuple[str, ...] = ()) -> Obj:
    """Go's omitempty: zero counters are left out of a status, as the real API shows it."""
    return {k: v for k, v in status.items() if v or k in keep}


def write_status(ctx: Context, resource: str, obj: Obj, status: Obj) -> Obj | None:
    """Writes the status subresource only when it changed; None when the object is gone."""
    if obj.get("status") == status:
        return obj
    body = {**obj, "status": status}  # the store copies what it keeps
    try:
        return ctx.api.update(resource, body, subresource="status")
    except Exception as exc:
        if is_status_error(exc, 404):
            return None
        raise


def set_condition(
    conditions: list[Obj], new: Obj, *, now: str | None = None, touch: bool = False
) -> list[Obj]:
    """Replaces the condition of the same type; the transition time moves only when the status does.

    A `lastUpdateTime` moves when the reason changes, or when `touch` says the condition was
    renewed (a Deployment that made progress).
    """
    stamp = now or names.rfc3339()
    out, found = [], False
    for cond in conditions:
        if cond.get("type") != new["type"]:
            out.append(cond)
            continue
        found = True
        merged = {**new}
        same_status = cond.get("status") == new["status"]
        merged["lastTransitionTime"] = (
            cond.get("lastTransitionTime", stamp) if same_status else stamp
        )
        if "lastUpdateTime" in new:
            unchanged = same_status and cond.get("reason") == new.get("reason") and not touch
            merged["lastUpdateTime"] = cond.get("lastUpdateTime", stamp) if unchanged else stamp
        out.append(merged)
    if not found:
        added = {**new, "lastTransitionTime": stamp}
        if "lastUpdateTime" in new:
            added["lastUpdateTime"] = stamp
        out.append(added)
    return out


def adopt_orphans(ctx: Context, resource: str, owner: Obj) -> list[Obj]:
    """ClaimObjects: objects the owner's selector picks that no controller owns become its own."""
    selector = owner["spec"].get("selector")
    adopted = []
    for obj in ctx.cache.orphans(resource, owner["metadata"]["namespace"]):
        meta = obj["metadata"]
        if (
            controller_uid(obj)
            or meta.get("deletionTimestamp")
            or not matches_selector(selector, labels_of(obj))
        ):
            continue
        refs = [*(meta.get("ownerReferences") or []), controller_ref(owner)]
        try:
            adopted.append(
                ctx.api.patch(
                    resource,
                    meta["namespace"],
                    meta["name"],
                    {"metadata": {"ownerReferences": refs}},
                )
            )
        except Exception as exc:
            if not is_status_error(exc, 404):
                raise
    return adopted
