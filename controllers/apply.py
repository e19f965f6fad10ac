"""The thin, shared write steps of a reconcile: create or correct a child, write status.

Reads come from the engine's cache; a child's patch goes through `ctx.kube` with the
resourceVersion it was computed from, against the operator's own writes (`conflict_on`): a
cache older than the last run's own patch costs a 409 and a diff against the server's
copy, never a change made (and reported) twice; others' writes since, the child's
controller updating its status, do not stop a patch of the fields we own (if the engine
knows our last write of it: see `Kube.patch`'s conflict_on). The status is
ours alone and a key runs once at a time, each run from a mirror at least as new as the
last one's, so it is patched without one (as kopf does, and controller-runtime's
MergeFrom): a precondition only failed when the mirror had not yet caught up with the
previous run's own status write. Nothing is written when nothing differs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from datetime import UTC, datetime
from typing import TypeVar

from controllers.base import Body, Context, Kind, Manifest, PermanentError, Result
from controllers.conditions import TIME_FORMAT, condition_of, find_condition
from controllers.describe import describe_patch, describe_status
from controllers.drift import owned_diff
from controllers.fields import controlling_ref, deep_get
from controllers.kube import AlreadyAllocated, Conflict
from controllers.problems import CHILD_CONFLICT, INVALID_SPEC, PODS_REFUSED, Problem
from controllers.progress import progress_wait
from controllers.refusals import short_of_pods

log = logging.getLogger(__name__)
T = TypeVar("T")

# While pods start, look again even if no event arrives, for a controller whose status reads
# what may change without waking its CR (finish's `recheck`): soon at first, then less often
# the longer a rollout takes, so a stuck one is no busy loop.
RECHECK_MIN_SECONDS = 2.0
RECHECK_MAX_SECONDS = 60.0


def now() -> str:
    return datetime.now(UTC).strftime(TIME_FORMAT)


def ensure_child(
    ctx: Context,
    kind: Kind,
    want: Manifest,
    have: Body | None,
    *,
    exact: frozenset[str] = frozenset(),
) -> Body:
    """Create `want` if missing, else patch only the fields it owns that drifted.

    `exact`: dotted paths of maps that must match key for key (see `owned_diff`).
    """
    return ensure_child_while(ctx, kind, want, have, lambda child: None, exact=exact)[0]


def ensure_child_while(
    ctx: Context,
    kind: Kind,
    want: Manifest,
    have: Body | None,
    work: Callable[[Body], T],
    *,
    exact: frozenset[str] = frozenset(),
) -> tuple[Body, T]:
    """`ensure_child`, and `work` done while the server answers the child's patch (the
    write of a spec change) instead of after it: a Memcached run tells its status
    meanwhile, about 2 ms off the 12.7 from a size patch to its status on the rig (none
    on kubesim, whose server needs the CPU the work would use). `work` is given the child
    as it was before the patch, or as created: it must read only what a patch of the
    fields we own leaves alone, and write nothing. If it raises, the patch is answered,
    recorded and reported first."""
    name = want["metadata"]["name"]
    if have is None:
        created = _create(ctx, kind, want, exact)
        return created, work(created)
    if deep_get(have, "metadata.deletionTimestamp"):
        return have, work(have)  # its deletion event brings us back to re-create it
    patch = owned_diff(want, have, exact=exact)
    if patch is None:
        return have, work(have)
    meta = want["metadata"]
    answer = ctx.kube.begin_patch(
        kind,
        meta["namespace"],
        name,
        patch,
        resource_version=have["metadata"]["resourceVersion"],
        conflict_on="own",
    )
    try:
        done = work(have)
    finally:
        updated = _patched(ctx, kind, want, have, patch, answer, exact)
    return updated, done


def _create(ctx: Context, kind: Kind, want: Manifest, exact: frozenset[str]) -> Body:
    try:
        created = ctx.kube.create(kind, want)
    except (Conflict, AlreadyAllocated):
        # Already there: most often this key's own create of a moment ago, not yet in
        # the mirror (the key ran again as its first children's events came in). A
        # Service that asks for the nodePort or clusterIP it holds meets a 422 "already
        # allocated" instead of the 409: kube-apiserver allocates before the name check.
        if (found := _just_created(ctx, kind, want, exact)) is None:
            raise
        return found
    ctx.report.action(f"Created {kind} {want['metadata']['name']}")
    return created


def _patched(
    ctx: Context,
    kind: Kind,
    want: Manifest,
    have: Body,
    patch: Body,
    answer: Callable[[], Body],
    exact: frozenset[str],
) -> Body:
    """The child as the patch of `have` left it, once `answer`ed; reported."""
    namespace, name = want["metadata"]["namespace"], want["metadata"]["name"]
    try:
        updated = answer()
    except Conflict:
        # The mirror has not caught up with a write since (a run's own, or, from a Kube
        # that keeps no record of its writes, anyone's): diff against the server's copy
        # and patch it without a precondition, as controller-runtime's MergeFrom does,
        # rather than retry the whole reconcile. A spec change racing this patch changes
        # the child's generation, which wakes us.
        fresh = ctx.kube.get(kind, namespace, name)
        if fresh is None or deep_get(fresh, "metadata.deletionTimestamp"):
            raise
        again = owned_diff(want, fresh, exact=exact)
        if again is None:
            return fresh
        have, patch = fresh, again
        updated = ctx.kube.patch(kind, namespace, name, patch)
    had_owner = controlling_ref(have["metadata"].get("ownerReferences"))
    if had_owner is None and controlling_ref(want["metadata"].get("ownerReferences")):
        # Someone else's object of the name we want, taken over as controller-runtime does
        # (problems.ownership_problem): say so, as its fields below become ours.
        ctx.report.action(f"Adopted {kind} {name}: it had no controller (created outside opsboard)")
    for line in describe_patch(kind.kind, name, patch, have):
        ctx.report.action(line)
    return updated


def _just_created(ctx: Context, kind: Kind, want: Manifest, exact: frozenset[str]) -> Body | None:
    """The server's copy of a child whose create found it already there, if it is `want` as
    created: controlled by the same owner and alike in every field we own. Anything else (a
    child to correct, another controller's object) is for the next run, from the mirror:
    `want` may be the whole manifest where a patch must touch only mutable fields."""
    meta = want["metadata"]
    found = ctx.kube.get(kind, meta["namespace"], meta["name"])
    if found is None:
        return None
    ours = controlling_ref(meta.get("ownerReferences"))
    theirs = controlling_ref(found["metadata"].get("ownerReferences"))
    if ours is None or theirs is None or theirs.get("uid") != ours.get("uid"):
        return None
    return found if owned_diff(want, found, exact=exact) is None else None


def refusal_events(ctx: Context, workload: Body | None) -> list[Body]:
    """The Events about a StatefulSet or DaemonSet, read (from the mirror: one indexed
    query) only while it is short of pods: it tells a refused pod (a quota) only so
    (controllers.refusals)."""
    if workload is None or not short_of_pods(workload):
        return []
    return ctx.cache.events_about(workload)


def write_status(ctx: Context, kind: Kind, cr: Body, status: Body) -> None:
    """Patch the status subresource, only if a field the operator owns changed."""
    old = cr.get("status") or {}
    if all(old.get(key) == value for key, value in status.items()):
        return
    meta = cr["metadata"]
    ctx.kube.patch_status(kind, meta["namespace"], meta["name"], status)
    for line in describe_status(old, status):
        ctx.report.status_change(line)


def finish(
    ctx: Context,
    kind: Kind,
    cr: Body,
    status: Body,
    problem: Problem | None,
    *,
    permanent: Collection[str] = (INVALID_SPEC,),
    recheck: bool = True,
    due: float | None = None,
) -> Result:
    """The end every reconcile shares: write the status if it changed (a change that only
    reports early progress may wait a moment: controllers.progress); a problem of the kinds
    in `permanent` is for the user to fix (their change of the CR brings us back), so it ends
    the run as a PermanentError; otherwise `settle`. `recheck=False`: every change the
    status is told from wakes this CR (its pods are owned), so a rollout needs no timer.
    `due`: seconds after which the status would read otherwise with no event to tell (a
    pod's grace ends, for a node or to become ready: controllers.graces): run again by then."""
    fatal = problem if problem is not None and problem[0] in permanent else None
    # A run that ends in a PermanentError has no requeue to write held-back progress later.
    wait = None if fatal else progress_wait(cr.get("status") or {}, status, now=datetime.now(UTC))
    if wait is None:
        write_status(ctx, kind, cr, status)
    if fatal is not None:
        raise PermanentError(fatal[1])
    result = settle(ctx, cr, status, recheck=recheck)
    # The held-back progress is written by this requeue at the latest; so is a grace's end.
    soonest = min((s for s in (wait, due, result.requeue_after) if s is not None), default=None)
    return Result(requeue_after=soonest)


def settle(ctx: Context, cr: Body, status: Body, *, recheck: bool = True) -> Result:
    """Tell a user about new trouble once (Event + log), and (with `recheck`) look again
    while pods start, for what may change without an event that wakes this CR.

    Once: when Degraded turns True or changes its reason, not when only its counts change.
    """
    degraded = find_condition(status["conditions"], "Degraded") or {}
    if degraded.get("status") == "True":
        before = condition_of(cr, "Degraded")
        if (before.get("status"), before.get("reason")) != ("True", degraded["reason"]):
            ctx.report.event("Warning", degraded["reason"], degraded["message"])
            log.warning("Degraded %s: %s: %s", ctx.key, degraded["reason"], degraded["message"])
        # Neither's end brings us back: the other owner's child deleted; a Deployment's
        # ReplicaFailure gone (a status change of it wakes no one; a scale-down creates no pod).
        if degraded["reason"] in (CHILD_CONFLICT, PODS_REFUSED):
            return Result(requeue_after=RECHECK_MAX_SECONDS)
        return Result.done()  # waiting on the user or the registry, not on us: no retry loop
    progressing = find_condition(status["conditions"], "Progressing") or {}
    if recheck and progressing.get("status") == "True":
        return Result(requeue_after=recheck_after(progressing.get("lastTransitionTime")))
    return Result.done()


def recheck_after(since: str | None) -> float:
    """Half the time a rollout has taken so far, between the two bounds."""
    try:
        started = datetime.strptime(since or "", TIME_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        return RECHECK_MIN_SECONDS
    elapsed = (datetime.now(UTC) - started).total_seconds()
    return min(max(elapsed / 2, RECHECK_MIN_SECONDS), RECHECK_MAX_SECONDS)
