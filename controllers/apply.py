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

from controllers.base import Body, Context, Kind, Manifest, PermanentError, Result
from controllers.conditions import TIME_FORMAT, condition_of, find_condition
from controllers.describe import describe_patch, describe_status
from controllers.drift import owned_diff
from controllers.fields import controlling_ref, deep_get
from controllers.kube import AlreadyAllocated, Conflict
from controllers.problems import (
    CHILD_CONFLICT,
    INVALID_SPEC,
    PODS_REFUSED,
    RECONCILE_FAILED,
    Problem,
)
from controllers.progress import progress_wait
from controllers.refusals import short_of_pods

log = logging.getLogger(__name__)

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
    name = want["metadata"]["name"]
    if have is None:
        return _create(ctx, kind, want, exact)
    if deep_get(have, "metadata.deletionTimestamp"):
        return have  # its deletion event brings us back to re-create it
    patch = owned_diff(want, have, exact=exact)
    if patch is None:
        return have
    meta = want["metadata"]
    answer = ctx.kube.begin_patch(
        kind,
        meta["namespace"],
        name,
        patch,
        resource_version=have["metadata"]["resourceVersion"],
        conflict_on="own",
    )
    return _patched(ctx, kind, want, have, patch, answer, exact)


def ensure_child_and_finish(
    ctx: Context,
    primary: Kind,
    cr: Body,
    kind: Kind,
    want: Manifest,
    have: Body | None,
    tell: Callable[[Body], tuple[Body, float | None]],
    *,
    exact: frozenset[str] = frozenset(),
    recheck: bool = True,
) -> Result:
    """`ensure_child` and `finish` (with no problem) in one round trip: the status `tell`
    gives (with `due`) from the child as it stands is sent first and the child's patch
    right after, both answered together. Every operator that scales a Deployment and then
    reports observedGeneration waits for two writes one after the other; this took a size
    patch from 0.87x kopf's time to 0.51-0.62x on kubesim (README, Performance).

    So the status may be in a moment before the child's patch: it says the generation seen
    and what the pods are (the child's status, which a patch of its spec leaves as it was),
    not that the child was written. If the patch is refused, the run's error sets Degraded
    on that generation (engine.runner.degrade), and while that stands the status is
    written after the child's answer, as `finish` does, so a retry refused again does not
    clear Degraded a moment before setting it again. A transient error (a 500, a timeout)
    sets no Degraded: retried with backoff, it is told by the run log and its Event."""
    failed = condition_of(cr, "Degraded").get("reason") == RECONCILE_FAILED
    if have is None or deep_get(have, "metadata.deletionTimestamp") or failed:
        child = ensure_child(ctx, kind, want, have, exact=exact)
        status, due = tell(child)
        return finish(ctx, primary, cr, status, None, recheck=recheck, due=due)
    status, due = tell(have)
    sent, wait = _send_status(ctx, primary, cr, status, hold=True)
    try:
        ensure_child(ctx, kind, want, have, exact=exact)
    except BaseException:
        try:  # read, to free its connection; the child's error is the run's
            sent()
        except Exception as exc:
            log.warning("%s: the status write beside a refused one failed too: %s", ctx.key, exc)
        raise
    sent()
    return _settled(ctx, cr, status, wait=wait, due=due, recheck=recheck)


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


def begin_status(ctx: Context, kind: Kind, cr: Body, status: Body) -> Callable[[], None]:
    """A patch of the status subresource, only if a field the operator owns changed, sent
    now: the call returned reads the answer and reports the change, and must be made
    (`Kube.begin_patch`)."""
    old = cr.get("status") or {}
    if all(old.get(key) == value for key, value in status.items()):
        return lambda: None
    meta = cr["metadata"]
    pending = ctx.kube.begin_patch_status(kind, meta["namespace"], meta["name"], status)

    def answered() -> None:
        pending()
        for line in describe_status(old, status):
            ctx.report.status_change(line)

    return answered


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
    sent, wait = _send_status(ctx, kind, cr, status, hold=fatal is None)
    sent()
    if fatal is not None:
        raise PermanentError(fatal[1])
    return _settled(ctx, cr, status, wait=wait, due=due, recheck=recheck)


def _send_status(
    ctx: Context, kind: Kind, cr: Body, status: Body, *, hold: bool
) -> tuple[Callable[[], None], float | None]:
    """The status write a run ends with, sent now (`begin_status`), unless it only reports
    early progress and may be held back (`hold`): then nothing is sent, and the seconds it
    waits are returned with the call (controllers.progress)."""
    old = cr.get("status") or {}
    wait = progress_wait(old, status, now=datetime.now(UTC)) if hold else None
    if wait is not None:
        return (lambda: None), wait
    return begin_status(ctx, kind, cr, status), None


def _settled(
    ctx: Context, cr: Body, status: Body, *, wait: float | None, due: float | None, recheck: bool
) -> Result:
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
