"""Why a CR is not converging: findings computed from what the mirror and the run log hold.

Pure: plain data in (`Observed`), an ordered list of `Finding`s out, most likely cause
first. No database, no Redis, no API server: `gather.py` fills `Observed` from those.
The rules about the pods are in pod_findings.py; here are those about the engine, the
last run's error, the expected children, rollouts, finalizers and the status, and
`diagnose`, which orders them all.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from controllers.base import Body
from controllers.conditions import find_condition
from controllers.fields import controlling_ref, deep_get
from controllers.refusals import CLAIM
from opsboard.diagnosis.errors import IMMUTABLE, ClaimFields, ClassifiedError, classify_error
from opsboard.diagnosis.observed import (
    RANK_BACKOFF,
    RANK_CONDITION,
    RANK_ENGINE_DOWN,
    RANK_ERROR,
    RANK_FINALIZER,
    RANK_FOREIGN_CHILD,
    RANK_MISSING_CHILD,
    RANK_PODS,
    RANK_QUEUE,
    RANK_REFUSED,
    RANK_ROLLOUT,
    RANK_STALE,
    RANK_UNREACHABLE,
    EngineState,
    Finding,
    Observed,
    ago,
    in_namespace,
    name_of,
    of_kind,
)
from opsboard.diagnosis.pod_findings import pod_findings, volume_findings

# How long after the mirror saw a CR change a stale status with nothing queued yet reads as
# "being picked up": the watcher writes the mirror, then queues the key.
PICKUP_GRACE_SECONDS = 10.0
# How long a workload's new generation may wait for the cluster's controller before the
# diagnosis says it is not acting: a kube-controller-manager at its default client limit (20
# requests a second) takes tens of seconds to reach the last of a thousand new Deployments.
CONTROLLER_GRACE_SECONDS = 60.0
_CONTROLLED = {"Deployment": "deployment", "StatefulSet": "statefulset", "DaemonSet": "daemonset"}


def _rollout_findings(objects: list[Body], *, explained: bool) -> list[Finding]:
    """`explained`: a finding above says why the new pods are not ready."""
    found = []
    for deployment in of_kind(objects, "Deployment"):
        progressing = find_condition(deep_get(deployment, "status.conditions"), "Progressing")
        if progressing and progressing.get("reason") == "ProgressDeadlineExceeded":
            deadline = deep_get(deployment, "spec.progressDeadlineSeconds", 600)
            name, namespace = name_of(deployment), deep_get(deployment, "metadata.namespace", "")
            why = (
                "Fix what keeps its new pods from becoming ready (above)"
                if explained
                else "Find why its new pods are not ready (kubectl -n "
                f"{namespace} describe deployment {name}, then its pods)"
            )
            found.append(
                Finding(
                    RANK_ROLLOUT,
                    "ProgressDeadlineExceeded",
                    f"The rollout of Deployment {name} is stuck past its progress "
                    f"deadline ({deadline} s): {progressing.get('message', '')}",
                    f"{why}, or revert the change that started the rollout.",
                    subject=f"Deployment {name}",
                )
            )
    return found


def _unobserved_findings(observed: Observed) -> list[Finding]:
    """A workload whose controller has not observed its generation, and nothing about it has
    changed for a while: the cluster's controller is not acting on it (kube-controller-manager
    down, or far behind). Nothing else would say so: its pods simply never come."""
    found = []
    for workload in observed.objects:
        controller = _CONTROLLED.get(str(workload.get("kind")))
        since = observed.objects_changed_at.get(str(deep_get(workload, "metadata.uid", "")))
        if (
            controller is None
            or since is None
            or observed.now is None
            or deep_get(workload, "metadata.deletionTimestamp")
        ):
            continue
        generation = int(deep_get(workload, "metadata.generation", 0) or 0)
        seen = int(deep_get(workload, "status.observedGeneration", 0) or 0)
        if seen >= generation or (observed.now - since).total_seconds() < CONTROLLER_GRACE_SECONDS:
            continue
        kind, name = workload["kind"], name_of(workload)
        described = f"its status describes generation {seen}" if seen else "it has no status"
        found.append(
            Finding(
                RANK_PODS,
                "NotObserved",
                f"{kind} {name} is at generation {generation} and {described}: the cluster's "
                f"{controller} controller has not acted on it for {ago(since, observed.now)}.",
                "Check the cluster's kube-controller-manager (kubectl -n kube-system get pods, "
                "or the provider's status page for a managed cluster): it is not running, or "
                f"far behind. opsboard's part is done: it wrote the {kind}.",
                subject=f"{kind} {name}",
            )
        )
    return found


def _denied(error: ClassifiedError | None, kind: str, name: str) -> bool:
    """Whether the last run's 403 refused this child (a create RBAC refused names none)."""
    if error is None or not error.denied[0]:
        return False
    resource, denied_name = error.denied
    return resource == f"{kind.lower()}s" and denied_name in ("", name)


def _children_findings(observed: Observed, refused: ClassifiedError | None) -> list[Finding]:
    """`refused`: the last run's error, classified (_last_error)."""
    kind = observed.cr.get("kind", "CR")
    found = []
    for child in observed.foreign:
        owner: dict[str, Any] = controlling_ref(deep_get(child, "metadata.ownerReferences")) or {}
        found.append(
            Finding(
                RANK_FOREIGN_CHILD,
                "ForeignChild",
                f"{child.get('kind')} {name_of(child)} is in the way: it is controlled by "
                f"{owner.get('kind', '?')} {owner.get('name', '?')}, not by this {kind}.",
                f"Rename this {kind}, or delete that {child.get('kind')} if nothing needs it.",
                subject=f"{child.get('kind')} {name_of(child)}",
            )
        )
    for child in observed.unowned:
        if refused is not None and refused.refused == (child.get("kind"), name_of(child)):
            continue  # its adoption failed: the error finding says why
        found.append(
            Finding(
                RANK_MISSING_CHILD,
                "UnownedChild",
                f"{child.get('kind')} {name_of(child)} exists but was not created by opsboard "
                "(it has no owner): the next reconcile adopts it, as controller-runtime does.",
                f"Nothing to do if it is meant for this {kind}; if not, delete it or rename "
                f"this {kind}.",
                subject=f"{child.get('kind')} {name_of(child)}",
            )
        )
    there = {(c.get("kind"), name_of(c)) for c in [*observed.foreign, *observed.unowned]}
    for child_kind, name in observed.missing:
        if (child_kind, name) in there or _denied(refused, child_kind, name):
            continue  # its creation refused (403): the error finding says why
        found.append(
            Finding(
                RANK_MISSING_CHILD,
                "MissingChild",
                f"{child_kind} {name} is missing.",
                "The next reconcile creates it; if it stays missing, look at the errors here.",
                subject=f"{child_kind} {name}",
            )
        )
    return found


def _finalizer_findings(observed: Observed) -> list[Finding]:
    blocked = [observed.cr] + [
        o for o in observed.objects if deep_get(o, "metadata.deletionTimestamp")
    ]
    found = []
    for obj in blocked:
        if not deep_get(obj, "metadata.deletionTimestamp"):
            continue
        for finalizer in deep_get(obj, "metadata.finalizers", []) or []:
            domain = finalizer.split("/", 1)[0] if "/" in finalizer else ""
            if finalizer in ("foregroundDeletion", "orphan"):
                owner = "the garbage collector, once the children are gone"
            elif domain == "kubernetes.io" or domain.endswith(".kubernetes.io"):
                owner = "the cluster's own controllers (kube-controller-manager)"
            elif domain in observed.running_controllers:
                owner = "an opsboard controller, which is running"
            else:
                owner = "a controller opsboard does not run: is it running?"
            what = (
                f"Deletion of {obj.get('kind')} {name_of(obj)} waits for finalizer {finalizer} "
                f"(removed by {owner}); asked for "
                f"{deep_get(obj, 'metadata.deletionTimestamp')}."
            )
            found.append(
                Finding(
                    RANK_FINALIZER,
                    "BlockingFinalizer",
                    what,
                    "Start the controller that owns it; as a last resort remove it: kubectl "
                    f"patch{in_namespace(obj)} {str(obj.get('kind', '')).lower()} {name_of(obj)} "
                    "--type=merge "
                    '-p \'{"metadata":{"finalizers":null}}\'',
                    subject=f"{obj.get('kind')} {name_of(obj)}",
                )
            )
    return found


_ERROR_RANKS = {
    "Forbidden": RANK_REFUSED,
    "Webhook": RANK_REFUSED,
    "Invalid": RANK_REFUSED,
    "PortTaken": RANK_REFUSED,
    "Unreachable": RANK_UNREACHABLE,
    "Conflict": RANK_QUEUE,
}


def _last_error(observed: Observed) -> ClassifiedError | None:
    run = observed.last_run
    if run is None or run.outcome not in ("error", "permanent") or not run.error:
        return None
    return classify_error(
        run.error,
        role=observed.operator_role,
        permanent=run.outcome == "permanent",
        kind=str(observed.cr.get("kind", "")),
        namespace=str(deep_get(observed.cr, "metadata.namespace", "")),
        claims=_claim_fields(observed, run.error),
    )


def _claim_fields(observed: Observed, error: str) -> ClaimFields:
    """What the advice for a claim the error says was refused names: the CR's field for its
    size, and its StorageClass, from the claims the mirror shows under the CR."""
    refused = CLAIM.search(error)
    claims = of_kind(observed.objects, "PersistentVolumeClaim") if refused else []
    claim = next((c for c in claims if refused and name_of(c) == refused[1]), None)
    storage_class = deep_get(claim, "spec.storageClassName") if claim else None
    return ClaimFields(observed.fields.storage, str(storage_class) if storage_class else None)


def _spec_path(value: object, spec: object, path: str = "spec") -> str | None:
    """The dotted path of the CR's spec field that holds `value` (the NodePort it asks for)."""
    if spec == value:
        return path
    if isinstance(spec, dict):
        for key, inner in spec.items():
            if found := _spec_path(value, inner, f"{path}.{key}"):
                return found
    return None


def _explained(observed: Observed, error: ClassifiedError) -> ClassifiedError:
    """The error told with what the mirror knows: a refused child that opsboard did not
    create (its adoption failed), the Service that holds a NodePort and the CR's field."""
    kind = observed.cr.get("kind", "CR")
    child = f"{error.refused[0]} {error.refused[1]}"
    unowned = {(c.get("kind"), name_of(c)) for c in observed.unowned}
    if error.code == "Invalid" and error.refused in unowned:
        cannot = (
            f"cannot change its {error.field}, which is immutable"
            if error.why == IMMUTABLE
            else f"cannot change its {error.field}: {error.why}"
        )
        namespace = deep_get(observed.cr, "metadata.namespace", "")
        command = f"kubectl -n {namespace} delete {error.refused[0].lower()} {error.refused[1]}"
        return replace(
            error,
            what=f"{child} already exists and was not created by opsboard (it has no owner). "
            f"opsboard adopts such a {error.refused[0]}, but {cannot}.",
            # Its deletion wakes the CR, which expects it by name (opsboard.engine.expected).
            todo=f"Delete it ({command}): opsboard then creates its own. Or rename this {kind}.",
        )
    if error.code == "PortTaken":
        user = observed.port_users.get(error.port, "another Service")
        where = _spec_path(error.port, observed.cr.get("spec"))
        return replace(
            error,
            what=f"NodePort {error.port} is already in use by {user}, so {child} cannot get it.",
            todo=f"Set another {where or 'NodePort'}, or remove it to let the cluster choose "
            f"one. Or free the port: the engine retries at least every "
            f"{_seconds(observed.engine.temporary_backoff_max)} and succeeds once it is free.",
        )
    return error


def _seconds(seconds: float) -> str:
    """'60 s', '2 min', '90 s'."""
    return f"{seconds / 60:g} min" if seconds >= 120 and seconds % 60 == 0 else f"{seconds:g} s"


def _due(at: datetime, now: datetime | None) -> str:
    """How soon `at` comes: 'in 9 s (17:00:09 UTC)', or 'now (…)' once it has passed."""
    wait = (at - now).total_seconds() if now else 0
    return f"{f'in {wait:.0f} s' if wait > 0 else 'now'} ({at:%H:%M:%S} UTC)"


def _error_findings(observed: Observed, error: ClassifiedError | None) -> list[Finding]:
    """`error`: the last run's, classified (_last_error)."""
    run, engine = observed.last_run, observed.engine
    found = []
    if run is not None and error is not None:
        error = _explained(observed, error)
        found.append(
            Finding(
                _ERROR_RANKS.get(error.code, RANK_ERROR),
                error.code,
                f"{error.what} (last run, {ago(run.started_at, observed.now)} ago)",
                error.todo,
                subject=" ".join(error.refused) if all(error.refused) else "",
            )
        )
    if engine.failures and engine.next_retry_at is not None:
        found.append(
            Finding(
                RANK_BACKOFF,
                "Backoff",
                f"Backoff in effect: {engine.failures} failure(s) in a row; "
                f"the next retry is due {_due(engine.next_retry_at, observed.now)}.",
                "Fix the error above, then press Reconcile now instead of waiting.",
            )
        )
    return found


def _engine_findings(observed: Observed) -> list[Finding]:
    engine, now = observed.engine, observed.now
    found = []
    if not engine.redis_up:
        found.append(
            Finding(
                RANK_ENGINE_DOWN,
                "RedisDown",
                "Redis does not answer: nothing can be queued or reconciled.",
                "Check that the Redis server REDIS_URL names is running and reachable from "
                "here, and its password in REDIS_URL; the engine reconnects by itself.",
            )
        )
        return found
    if not engine.watcher_leader and engine.standbys:
        found.append(_no_leader(engine))
    elif not engine.watcher_leader:
        last = (
            f" (the last watcher, {engine.last_watcher}, was seen "
            f"{ago(engine.last_watcher_at, now)} ago)"
            if engine.last_watcher
            else ""
        )
        found.append(
            Finding(
                RANK_ENGINE_DOWN,
                "NoWatcher",
                f"No watcher is leading: the mirror is stale and no change is noticed{last}.",
                "Start the watcher (manage.py runwatcher); a standby takes the Lease itself.",
            )
        )
    if not engine.workers:
        found.append(
            Finding(
                RANK_ENGINE_DOWN,
                "NoWorker",
                "No live worker: queued reconciles are not run.",
                "Start a Celery worker (celery -A opsboard worker) where it reaches REDIS_URL.",
            )
        )
    if engine.queued_since is not None and now is not None and engine.running_since is None:
        waited = (now - engine.queued_since).total_seconds()
        if waited > engine.stale_after:
            found.append(
                Finding(
                    RANK_QUEUE,
                    "WaitingTooLong",
                    f"This object has waited {waited:.0f} s in the queue without a run "
                    f"(more than OPSBOARD_QUEUE_STALE_SECONDS = {engine.stale_after:g}).",
                    "Check the workers: busy with others, stalled, or none consuming.",
                )
            )
    return found


def _no_leader(engine: EngineState) -> Finding:
    """Watchers run, but none holds the Lease: a leader that could not renew it gave it up
    and the standbys cannot take it, most often because the API server is unreachable."""
    why = (
        f": their last attempt failed with {engine.lease_error}"
        if engine.lease_error
        else " (the Lease is taken once its holder's term runs out)"
    )
    return Finding(
        RANK_ENGINE_DOWN,
        "NoLeader",
        f"{engine.standbys} watcher(s) running, but none can take the leader Lease{why}. "
        "Until one does, the mirror is stale and no change is noticed.",
        "Check that the watchers reach the API server: its health, the network between, and "
        "the credentials of the kubeconfig they use; a watcher leads as soon as it can.",
    )


def _condition_findings(observed: Observed) -> list[Finding]:
    degraded = find_condition(deep_get(observed.cr, "status.conditions"), "Degraded")
    if not degraded or degraded.get("status") != "True":
        return []
    return [
        Finding(
            RANK_CONDITION,
            str(degraded.get("reason") or "Degraded"),
            f"Degraded: {degraded.get('reason')}: {degraded.get('message')}",
            "See the operator's docs for this reason (docs/operators.md).",
        )
    ]


def _stale_findings(observed: Observed) -> list[Finding]:
    generation = int(deep_get(observed.cr, "metadata.generation", 0) or 0)
    seen = deep_get(observed.cr, "status.observedGeneration")
    if not isinstance(seen, int) or seen >= generation:
        return []
    if deep_get(observed.cr, "metadata.deletionTimestamp"):
        return []  # the deletion raised the generation: not a spec for a reconcile to observe
    engine, now = observed.engine, observed.now
    # Said only from the key's state in Redis: a key nothing queued (its change lost, or
    # not queued yet) must not read as "pending".
    just_changed = (
        observed.changed_at is not None
        and now is not None
        and (now - observed.changed_at).total_seconds() < PICKUP_GRACE_SECONDS
    )
    if engine.running_since:
        where, todo = " A reconcile is running.", "Wait for it to finish."
    elif engine.queued_since:
        where = " A reconcile is queued."
        todo = "Wait for the next reconcile; if it never comes, see the engine findings."
    elif engine.failures and engine.next_retry_at is not None:
        where = f" The next retry is due {_due(engine.next_retry_at, now)}."
        todo = "Fix the error above, then press Reconcile now instead of waiting."
    elif just_changed:  # before a permanent mark: the change may be the fix
        where = " The change is being picked up."
        todo = "Nothing to do: the next reconcile observes it in a moment."
    elif engine.next_retry_at is not None:  # a requeue-after
        where = f" The next reconcile is due {_due(engine.next_retry_at, now)}."
        todo = "Wait for it; if it does not run, see the engine findings."
    elif engine.permanent:
        where = " The last reconcile failed and is not retried until the object changes."
        todo = "Fix the error above, then press Reconcile now."
    else:
        where = " No reconcile is queued for it." if engine.redis_up else ""
        todo = "Press Reconcile now; if it does not run, see the engine findings."
    return [
        Finding(
            RANK_STALE,
            "StatusStale",
            f"The status describes generation {seen}; the spec is at {generation}.{where}",
            todo,
        )
    ]


def diagnose(observed: Observed) -> list[Finding]:
    """Every finding, most likely cause first. A CR's own Degraded condition is listed
    only when nothing more specific explains it."""
    pods = of_kind(observed.objects, "Pod")
    pod_causes = [
        *pod_findings(observed, pods),
        *_unobserved_findings(observed),
        *volume_findings(observed.objects),
    ]
    last_error = _last_error(observed)  # read by two rules: classified once
    found = [
        *_engine_findings(observed),
        *_error_findings(observed, last_error),
        *_children_findings(observed, last_error),
        *pod_causes,
        *_rollout_findings(observed.objects, explained=bool(pod_causes)),
        *_finalizer_findings(observed),
        *_stale_findings(observed),
    ]
    if not any(f.rank < RANK_CONDITION for f in found):
        found.extend(_condition_findings(observed))
    return sorted(found, key=lambda f: f.rank)
