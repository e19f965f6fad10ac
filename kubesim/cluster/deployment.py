"""The Deployment controller: ReplicaSets per pod template, rolled out step by step.

The arithmetic follows pkg/controller/deployment (NewRSNewReplicas,
reconcileOldReplicaSets, calculateStatus), so a rollout here moves through
the same intermediate states as on a real cluster.
"""

from __future__ import annotations

import copy
import math

from kubesim.cluster import names
from kubesim.cluster.api import is_status_error
from kubesim.cluster.controller import (
    Controller,
    Key,
    Obj,
    Watch,
    controller_ref,
    is_deleting,
)
from kubesim.cluster.replicaset import REPLICA_FAILURE
from kubesim.cluster.workloads import adopt_orphans, drop_zero, set_condition, write_status

COMPONENT = "deployment-controller"
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
HISTORY = "deployment.kubernetes.io/revision-history"
_HISTORY_CHARS = 2000
_NOT_COPIED = {REVISION, DESIRED, MAX_REPLICAS, HISTORY}
_NOT_COPIED.add("kubectl.kubernetes.io/last-applied-configuration")


class DeploymentController(Controller[Key]):
    name = "deployment"
    resource, owns, kind = "deployments.apps", "replicasets.apps", "Deployment"

    def watches(self) -> dict[str, Watch]:
        return {**super().watches(), "pods": self._pod_changed}

    def _pod_changed(self, old: Obj | None, new: Obj | None) -> None:
        """Recreate waits for old pods to be gone: their removal wakes the Deployment."""
        if new is not None or old is None:
            return
        for ref in old["metadata"].get("ownerReferences") or []:
            if ref.get("controller") and ref.get("kind") == "ReplicaSet":
                rs = self.ctx.cache.get(
                    "replicasets.apps", old["metadata"]["namespace"], ref["name"]
                )
                self.enqueue_owner(rs, "Deployment")

    def reconcile(self, key: Key) -> float | None:
        d = self.current(key)
        if d is None:
            return None
        all_rs = [
            rs
            for rs in self.ctx.cache.owned("replicasets.apps", d["metadata"]["uid"])
            if not is_deleting(rs)
        ]
        new_rs = next((rs for rs in all_rs if same_template(rs, d)), None)
        if new_rs is None:  # before making one, take in what an orphaning delete left behind
            all_rs += adopt_orphans(self.ctx, "replicasets.apps", d)
            new_rs = next((rs for rs in all_rs if same_template(rs, d)), None)
        old_rs = sorted((rs for rs in all_rs if rs is not new_rs), key=_created)
        progressing = None
        if d["spec"].get("paused"):
            # A paused Deployment still scales its one active ReplicaSet, but does not roll out.
            active = [rs for rs in [new_rs, *old_rs] if rs is not None and spec_replicas(rs)]
            if len(active) == 1:
                scaled = self._scale(d, active[0], desired(d))
                if active[0] is new_rs:
                    new_rs = scaled
                else:
                    old_rs[old_rs.index(active[0])] = scaled
        elif d["spec"].get("strategy", {}).get("type") == "Recreate":
            new_rs, progressing = self._recreate(d, new_rs, old_rs)
        else:
            new_rs, progressing = self._rolling(d, new_rs, old_rs)
        if new_rs is not None:
            self._sync_revision(d, new_rs, old_rs)
            all_rs = [new_rs, *old_rs]
        return self._write_status(d, new_rs, all_rs, old_rs, progressing)

    # -- strategies --------------------------------------------------------------------------

    def _rolling(
        self, d: Obj, new_rs: Obj | None, old_rs: list[Obj]
    ) -> tuple[Obj | None, Obj | None]:
        replicas = desired(d)
        created = None
        if new_rs is None:
            new_rs = created = self._create_rs(d, old_rs, new_rs_replicas(d, old_rs, 0))
        elif spec_replicas(new_rs) > replicas:
            new_rs = self._scale(d, new_rs, replicas)
        elif spec_replicas(new_rs) < replicas:
            new_rs = self._scale(
                d, new_rs, new_rs_replicas(d, [new_rs, *old_rs], spec_replicas(new_rs))
            )
        if new_rs is None:
            return None, None
        old_rs[:] = self._scale_down_old(d, new_rs, old_rs)
        if complete(d, new_rs, old_rs):
            self._cleanup(d, old_rs)
        return new_rs, created

    def _recreate(
        self, d: Obj, new_rs: Obj | None, old_rs: list[Obj]
    ) -> tuple[Obj | None, Obj | None]:
        old_rs[:] = [self._scale(d, rs, 0) if spec_replicas(rs) else rs for rs in old_rs]
        if self._old_pods_running(old_rs):
            return (
                new_rs,
                None,
            )  # the old pods must be gone, not just terminating, before new ones start
        if new_rs is None:
            new_rs = self._create_rs(d, old_rs, desired(d))
            return new_rs, new_rs
        if spec_replicas(new_rs) != desired(d):
            new_rs = self._scale(d, new_rs, desired(d))
        if complete(d, new_rs, old_rs):
            self._cleanup(d, old_rs)
        return new_rs, None

    def _old_pods_running(self, old_rs: list[Obj]) -> bool:
        for rs in old_rs:
            for pod in self.ctx.cache.owned("pods", rs["metadata"]["uid"]):
                if pod.get("status", {}).get("phase") not in ("Succeeded", "Failed"):
                    return True
        return False

    def _scale_down_old(self, d: Obj, new_rs: Obj, old_rs: list[Obj]) -> list[Obj]:
        """reconcileOldReplicaSets: first unhealthy old pods, then as availability allows."""
        if not sum(spec_replicas(rs) for rs in old_rs):
            return old_rs
        all_rs = [new_rs, *old_rs]
        min_available = desired(d) - max_unavailable(d)
        new_unavailable = spec_replicas(new_rs) - available(new_rs)
        budget = sum(spec_replicas(rs) for rs in all_rs) - min_available - new_unavailable
        if budget <= 0:
            return old_rs
        out = []
        for rs in old_rs:
            unhealthy = spec_replicas(rs) - available(rs)
            if budget > 0 and unhealthy > 0:
                cut = min(budget, unhealthy)
                rs = self._scale(d, rs, spec_replicas(rs) - cut)
                budget -= cut
            out.append(rs)
        spare = sum(available(rs) for rs in [new_rs, *out]) - min_available
        result = []
        for rs in out:
            if spare > 0 and spec_replicas(rs) > 0:
                cut = min(spare, spec_replicas(rs))
                rs = self._scale(d, rs, spec_replicas(rs) - cut)
                spare -= cut
            result.append(rs)
        return result

    def _cleanup(self, d: Obj, old_rs: list[Obj]) -> None:
        limit = int(d["spec"].get("revisionHistoryLimit", 10))
        spent = [
            rs
            for rs in old_rs
            if not spec_replicas(rs) and not rs.get("status", {}).get("replicas")
        ]
        spent.sort(key=revision)
        for rs in spent[: max(len(spent) - limit, 0)]:
            self.ctx.api.delete(
                "replicasets.apps", rs["metadata"]["namespace"], rs["metadata"]["name"]
            )
            old_rs.remove(rs)

    # -- writes ------------------------------------------------------------------------------

    def _create_rs(self, d: Obj, old_rs: list[Obj], replicas: int) -> Obj | None:
        collisions = d.get("status", {}).get("collisionCount")
        template = copy.deepcopy(d["spec"]["template"])
        pod_hash = names.template_hash(template, collisions)
        template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = pod_hash
        selector = copy.deepcopy(d["spec"]["selector"])
        selector.setdefault("matchLabels", {})[HASH_LABEL] = pod_hash
        annotations = {
            k: v
            for k, v in (d["metadata"].get("annotations") or {}).items()
            if k not in _NOT_COPIED
        }
        annotations |= replica_annotations(d)
        annotations[REVISION] = str(max((revision(rs) for rs in old_rs), default=0) + 1)
        rs = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{d['metadata']['name']}-{pod_hash}",
                "namespace": d["metadata"]["namespace"],
                "labels": template["metadata"]["labels"],
                "annotations": annotations,
                "ownerReferences": [controller_ref(d)],
            },
            "spec": {
                "replicas": replicas,
                "minReadySeconds": d["spec"].get("minReadySeconds", 0),
                "selector": selector,
                "template": template,
            },
        }
        try:
            created = self.ctx.api.create("replicasets.apps", rs)
        except Exception as exc:
            if not is_status_error(exc, 409):
                raise
            self._bump_collisions(d)
            return None
        self.ctx.events.normal(
            d,
            "ScalingReplicaSet",
            f"Scaled up replica set {created['metadata']['name']} to {replicas}",
            COMPONENT,
        )
        return created

    def _bump_collisions(self, d: Obj) -> None:
        """A ReplicaSet of that name with another template: hash again with a new count."""
        status = copy.deepcopy(d.get("status") or {})
        status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
        write_status(self.ctx, "deployments.apps", d, status)

    def _scale(self, d: Obj, rs: Obj, replicas: int) -> Obj:
        before = spec_replicas(rs)
        annotations = replica_annotations(d)
        have = rs["metadata"].get("annotations") or {}
        if before == replicas and all(have.get(k) == v for k, v in annotations.items()):
            return rs
        body = {"metadata": {"annotations": annotations}, "spec": {"replicas": replicas}}
        meta = rs["metadata"]
        scaled = self.ctx.api.patch("replicasets.apps", meta["namespace"], meta["name"], body)
        if before != replicas:
            direction = "up" if replicas > before else "down"
            self.ctx.events.normal(
                d,
                "ScalingReplicaSet",
                f"Scaled {direction} replica set {meta['name']} to {replicas} from {before}",
                COMPONENT,
            )
        return scaled

    def _sync_revision(self, d: Obj, new_rs: Obj, old_rs: list[Obj]) -> None:
        """The new ReplicaSet holds the highest revision (a rollback moves an old one up) and
        the Deployment's own annotations (so `rollout history` shows its change-cause)."""
        changed = new_rs_annotations(d, new_rs, old_rs)
        if changed:
            meta = new_rs["metadata"]
            body = {"metadata": {"annotations": changed}}
            new_rs = self.ctx.api.patch("replicasets.apps", meta["namespace"], meta["name"], body)
        rev = revision(new_rs)
        if (d["metadata"].get("annotations") or {}).get(REVISION) != str(rev):
            body = {"metadata": {"annotations": {REVISION: str(rev)}}}
            self.ctx.api.patch(
                "deployments.apps", d["metadata"]["namespace"], d["metadata"]["name"], body
            )

    def _write_status(
        self, d: Obj, new_rs: Obj | None, all_rs: list[Obj], old_rs: list[Obj], created: Obj | None
    ) -> float | None:
        """Writes the status; returns when to look again for the progress deadline."""
        d = (
            self.ctx.cache.get(
                "deployments.apps", d["metadata"]["namespace"], d["metadata"]["name"]
            )
            or d
        )
        old = d.get("status") or {}
        avail = sum(available(rs) for rs in all_rs)
        status: Obj = {
            "observedGeneration": d["metadata"].get("generation", 1),
            "replicas": sum(actual(rs) for rs in all_rs),
            "updatedReplicas": actual(new_rs) if new_rs else 0,
            "readyReplicas": sum(rs.get("status", {}).get("readyReplicas", 0) for rs in all_rs),
            "availableReplicas": avail,
            "unavailableReplicas": max(sum(spec_replicas(rs) for rs in all_rs) - avail, 0),
        }
        if "collisionCount" in old:
            status["collisionCount"] = old["collisionCount"]
        status = drop_zero(status, keep=("observedGeneration", "collisionCount"))
        stamp = names.rfc3339()
        if avail >= desired(d) - max_unavailable(d):
            available_now = (
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
            )
        else:
            available_now = (
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
            )
        conditions = set_condition(
            list(old.get("conditions") or []), _cond("Available", *available_now, stamp), now=stamp
        )
        current = next((c for c in conditions if c["type"] == "Progressing"), None)
        progress, recheck = progressing(
            d, new_rs, old_rs, old, status, current, created is not None
        )
        if progress is not None:
            touch = progress.get("reason") == "ReplicaSetUpdated" and _made_progress(old, status)
            conditions = set_condition(
                conditions, {**progress, "lastUpdateTime": stamp}, now=stamp, touch=touch
            )
        status["conditions"] = with_replica_failure(conditions, replica_failure(new_rs, all_rs))
        write_status(self.ctx, "deployments.apps", d, status)
        return recheck


# -- pure arithmetic ---------------------------------------------------------------------------


def replica_failure(new_rs: Obj | None, all_rs: list[Obj]) -> Obj | None:
    """getReplicaFailures: the new ReplicaSet's ReplicaFailure condition, else an old one's."""
    conditions: list[Obj] = [
        cond
        for rs in [new_rs, *all_rs]
        for cond in (rs or {}).get("status", {}).get("conditions") or []
    ]
    return next((c for c in conditions if c.get("type") == REPLICA_FAILURE), None)


def with_replica_failure(conditions: list[Obj], failure: Obj | None) -> list[Obj]:
    """The ReplicaSet's failure moved onto the Deployment (ReplicaSetToDeploymentCondition,
    then SetDeploymentCondition: one of the same status and reason is left as it is)."""
    others = [c for c in conditions if c.get("type") != REPLICA_FAILURE]
    if failure is None:
        return others
    current = next((c for c in conditions if c.get("type") == REPLICA_FAILURE), None)
    if current is not None and (current["status"], current.get("reason")) == (
        failure["status"],
        failure.get("reason"),
    ):
        return conditions
    since = failure.get("lastTransitionTime")
    if current is not None and current["status"] == failure["status"]:
        since = current.get("lastTransitionTime")
    moved = {
        "type": REPLICA_FAILURE,
        "status": failure["status"],
        "lastUpdateTime": failure.get("lastTransitionTime"),
        "lastTransitionTime": since,
        "reason": failure.get("reason"),
        "message": failure.get("message"),
    }
    return [*others, moved]


def _cond(type_: str, status: str, reason: str, message: str, stamp: str) -> Obj:
    return {
        "type": type_,
        "status": status,
        "lastUpdateTime": stamp,
        "reason": reason,
        "message": message,
    }


def progressing(
    d: Obj,
    new_rs: Obj | None,
    old_rs: list[Obj],
    old: Obj,
    status: Obj,
    current: Obj | None,
    created: bool,
) -> tuple[Obj | None, float | None]:
    """syncRolloutStatus: the Progressing condition, and the seconds left before its deadline."""

    def cond(status_: str, reason: str, message: str) -> Obj:
        return {"type": "Progressing", "status": status_, "reason": reason, "message": message}

    if d["spec"].get("paused"):
        return cond("Unknown", "DeploymentPaused", "Deployment is paused"), None
    if new_rs is None:
        return None, None
    name = new_rs["metadata"]["name"]
    if created:
        return cond("True", "NewReplicaSetCreated", f'Created new replica set "{name}"'), None
    if complete(d, new_rs, old_rs, status):
        return cond(
            "True", "NewReplicaSetAvailable", f'ReplicaSet "{name}" has successfully progressed.'
        ), None
    if current is None or current.get("reason") == "DeploymentPaused":
        return cond("True", "FoundNewReplicaSet", f'Found new replica set "{name}"'), None
    if (
        _made_progress(old, status)
        or current.get("reason") == "NewReplicaSetAvailable"
        or name not in current.get("message", "")
    ):
        return cond("True", "ReplicaSetUpdated", f'ReplicaSet "{name}" is progressing.'), None
    if current.get("reason") == "ProgressDeadlineExceeded":
        return current, None
    deadline = d["spec"].get("progressDeadlineSeconds", 600)
    since = names.parse_time(current.get("lastUpdateTime"))
    left = deadline - (names.now() - since).total_seconds() if since else deadline
    if left <= 0:
        return cond(
            "False", "ProgressDeadlineExceeded", f'ReplicaSet "{name}" has timed out progressing.'
        ), None
    return current, left


def _count(status: Obj, key: str) -> int:
    """A replica count of a Deployment's status, 0 when it is not set."""
    count: int = status.get(key, 0)
    return count


def _made_progress(old: Obj, new: Obj) -> bool:
    """util.DeploymentProgressing."""
    return (
        _count(new, "updatedReplicas") > _count(old, "updatedReplicas")
        or _count(new, "replicas") < _count(old, "replicas")
        or _count(new, "readyReplicas") > _count(old, "readyReplicas")
        or _count(new, "availableReplicas") > _count(old, "availableReplicas")
    )


def same_template(rs: Obj, d: Obj) -> bool:
    """EqualIgnoreHash: the ReplicaSet's template is the Deployment's plus the hash label."""
    return _without_hash(rs["spec"].get("template") or {}) == _without_hash(
        d["spec"].get("template") or {}
    )


def _without_hash(template: Obj) -> Obj:
    """The template minus the hash label; empty maps and absent maps are the same template."""
    meta = dict(template.get("metadata") or {})
    meta["labels"] = {k: v for k, v in (meta.get("labels") or {}).items() if k != HASH_LABEL}
    meta = {k: v for k, v in meta.items() if v not in ({}, None)}
    return {"metadata": meta, "spec": template.get("spec") or {}}


def desired(d: Obj) -> int:
    return int(d["spec"].get("replicas", 1))


def spec_replicas(rs: Obj | None) -> int:
    return int(rs["spec"].get("replicas", 1)) if rs else 0


def actual(rs: Obj | None) -> int:
    return int((rs or {}).get("status", {}).get("replicas", 0))


def available(rs: Obj | None) -> int:
    return int((rs or {}).get("status", {}).get("availableReplicas", 0))


def revision(rs: Obj) -> int:
    try:
        return int((rs["metadata"].get("annotations") or {}).get(REVISION, 0))
    except ValueError:
        return 0


def _created(rs: Obj) -> str:
    return rs["metadata"].get("creationTimestamp") or ""


def _resolve(value: int | str | None, total: int, default: str, *, round_up: bool) -> int:
    value = default if value is None else value
    if isinstance(value, int):
        return value
    if value.endswith("%"):
        scaled = int(value[:-1]) * total / 100
        return math.ceil(scaled) if round_up else math.floor(scaled)
    return int(value)


def _rolling_params(d: Obj) -> tuple[int, int]:
    """(maxSurge, maxUnavailable); both zero would block, so unavailable becomes 1."""
    rolling = d["spec"].get("strategy", {}).get("rollingUpdate") or {}
    if d["spec"].get("strategy", {}).get("type") == "Recreate":
        return 0, 0
    surge = _resolve(rolling.get("maxSurge"), desired(d), "25%", round_up=True)
    unavailable = _resolve(rolling.get("maxUnavailable"), desired(d), "25%", round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, min(unavailable, desired(d))


def max_surge(d: Obj) -> int:
    return _rolling_params(d)[0]


def max_unavailable(d: Obj) -> int:
    return _rolling_params(d)[1]


def new_rs_annotations(d: Obj, rs: Obj, old_rs: list[Obj]) -> dict[str, str]:
    """SetNewReplicaSetAnnotations on an existing new ReplicaSet: the annotations to change.

    The Deployment's annotations are copied (added or changed, never removed); a set that
    comes back by a rollback takes the next revision and keeps its former ones, oldest
    first, in revision-history (at most 2000 characters, as kube-controller-manager)."""
    have = rs["metadata"].get("annotations") or {}
    changed = {
        k: v
        for k, v in (d["metadata"].get("annotations") or {}).items()
        if k not in _NOT_COPIED and have.get(k) != v
    }
    wanted = max((revision(r) for r in old_rs), default=0) + 1
    rev = revision(rs)
    if rev < wanted and any(revision(r) >= rev for r in old_rs):
        changed[REVISION] = str(wanted)
        if REVISION in have:
            former = [r for r in have.get(HISTORY, "").split(",") if r]
            while former and len(",".join([*former, have[REVISION]])) > _HISTORY_CHARS:
                former.pop(0)
            changed[HISTORY] = ",".join([*former, have[REVISION]])
    return changed


def replica_annotations(d: Obj) -> dict[str, str]:
    return {DESIRED: str(desired(d)), MAX_REPLICAS: str(desired(d) + max_surge(d))}


def new_rs_replicas(d: Obj, all_rs: list[Obj], current_new: int) -> int:
    """NewRSNewReplicas for RollingUpdate: grow the new set as far as maxSurge allows."""
    max_total = desired(d) + max_surge(d)
    current = sum(spec_replicas(rs) for rs in all_rs) if all_rs else 0
    if current >= max_total:
        return current_new
    return current_new + max(min(max_total - current, desired(d) - current_new), 0)


def complete(d: Obj, new_rs: Obj, old_rs: list[Obj], status: Obj | None = None) -> bool:
    """DeploymentComplete: every replica updated and available, no old pods left."""
    if status is None:
        return (
            actual(new_rs) == desired(d)
            and available(new_rs) >= desired(d)
            and spec_replicas(new_rs) == desired(d)
            and not any(actual(rs) for rs in old_rs)
        )
    return (
        _count(status, "updatedReplicas") == desired(d)
        and _count(status, "replicas") == desired(d)
        and _count(status, "availableReplicas") == desired(d)
    )
