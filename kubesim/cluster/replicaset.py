"""The ReplicaSet controller: keeps `spec.replicas` pods, reports their readiness."""

from __future__ import annotations

import copy
from typing import Any

from kubesim.cluster import names
from kubesim.cluster.controller import (
    Context,
    Controller,
    Key,
    Obj,
    controller_ref,
    is_deleting,
    pod_ready,
)
from kubesim.cluster.refusals import Refusals
from kubesim.cluster.selectors import labels_of
from kubesim.cluster.workloads import (
    adopt_orphans,
    create_with_random_name,
    drop_zero,
    min_ready_seconds,
    write_status,
)
from kubesim.errors import ApiError

COMPONENT = "replicaset-controller"
REPLICA_FAILURE = "ReplicaFailure"
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


class ReplicaSetController(Controller[Key]):
    name = "replicaset"
    resource, owns, kind = "replicasets.apps", "pods", "ReplicaSet"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.refusals = Refusals(ctx, COMPONENT)

    def reconcile(self, key: Key) -> float | None:
        rs = self.current(key)
        if rs is None:
            return None
        pods = active_pods(self.ctx.cache.owned("pods", rs["metadata"]["uid"]))
        replicas = int(rs["spec"].get("replicas", 1))
        if len(pods) < replicas:
            pods += active_pods(adopt_orphans(self.ctx, "pods", rs))
        diff = len(pods) - replicas
        refusal = None
        if diff < 0:
            created, refusal = self._create_pods(rs, -diff)
            pods += created
        elif diff > 0:
            for pod in sorted(pods, key=deletion_rank)[:diff]:
                self._delete_pod(rs, pod)
                pods.remove(pod)
        recheck = self._write_status(rs, pods, refusal)
        if refusal is None:
            self.refusals.clear(key)
            return recheck
        return self.refusals.backoff(key)

    def _create_pods(self, rs: Obj, count: int) -> tuple[list[Obj], str | None]:
        """slowStartBatch: batches of 1, 2, 4, ... pods; a batch with a refused create is
        the last. Returns the pods made and the first refusal's message."""
        created: list[Obj] = []
        batch = 1
        while count > 0:
            batch = min(batch, count)
            refusals = []
            for _ in range(batch):
                try:
                    created.append(self._create_pod(rs))
                except ApiError as exc:
                    told = self.refusals.tell(rs, exc, f"Error creating: {exc.message}")
                    refusals.append(told.message)
            if refusals:
                return created, refusals[0]
            count -= batch
            batch *= 2
        return created, None

    def _create_pod(self, rs: Obj) -> Obj:
        template = copy.deepcopy(rs["spec"].get("template") or {})
        meta = template.get("metadata") or {}
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "namespace": rs["metadata"]["namespace"],
                "labels": meta.get("labels") or {},
                "ownerReferences": [controller_ref(rs)],
                **({"annotations": meta["annotations"]} if meta.get("annotations") else {}),
            },
            "spec": template.get("spec") or {},
        }
        created = create_with_random_name(self.ctx, self.rng, "pods", pod, rs["metadata"]["name"])
        self.ctx.events.normal(
            rs, "SuccessfulCreate", f"Created pod: {created['metadata']['name']}", COMPONENT
        )
        return created

    def _delete_pod(self, rs: Obj, pod: Obj) -> None:
        self.ctx.api.delete("pods", pod["metadata"]["namespace"], pod["metadata"]["name"])
        self.ctx.events.normal(
            rs, "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}", COMPONENT
        )

    def _write_status(self, rs: Obj, pods: list[Obj], refusal: str | None) -> float | None:
        template_labels = (rs["spec"].get("template") or {}).get("metadata", {}).get("labels") or {}
        min_ready = min_ready_seconds(rs)
        available, recheck = 0, None
        for pod in pods:
            wait = seconds_until_available(pod, min_ready)
            if wait == 0:
                available += 1
            elif wait is not None:
                recheck = wait if recheck is None else min(recheck, wait)
        status = {
            "replicas": len(pods),
            "fullyLabeledReplicas": sum(
                all(labels_of(p).get(k) == v for k, v in template_labels.items()) for p in pods
            ),
            "readyReplicas": sum(pod_ready(p) for p in pods),
            "availableReplicas": available,
            "observedGeneration": rs["metadata"].get("generation", 1),
        }
        status = drop_zero(status, keep=("replicas",))
        if conditions := conditions_after_sync(
            rs.get("status", {}).get("conditions") or [], refusal
        ):
            status["conditions"] = conditions
        write_status(self.ctx, "replicasets.apps", rs, status)
        return recheck


def conditions_after_sync(conditions: list[Obj], refusal: str | None) -> list[Obj]:
    """calculateStatus: a refused create adds ReplicaFailure (kept as first set while
    refusals go on); a sync without one removes it."""
    if refusal is None:
        return [c for c in conditions if c.get("type") != REPLICA_FAILURE]
    if any(c.get("type") == REPLICA_FAILURE for c in conditions):
        return conditions
    added = {
        "type": REPLICA_FAILURE,
        "status": "True",
        "lastTransitionTime": names.rfc3339(),
        "reason": "FailedCreate",
        "message": refusal,
    }
    return [*conditions, added]


def active_pods(pods: list[Obj]) -> list[Obj]:
    """Pods that count towards replicas: not terminating, not finished."""
    return [
        p
        for p in pods
        if not is_deleting(p) and p.get("status", {}).get("phase") not in ("Succeeded", "Failed")
    ]


def deletion_rank(pod: Obj) -> tuple[Any, ...]:
    """controller.ActivePods order: the pods to remove first sort first."""
    status = pod.get("status", {})
    restarts = sum(c.get("restartCount", 0) for c in status.get("containerStatuses") or [])
    created = pod["metadata"].get("creationTimestamp") or ""
    return (
        bool(pod.get("spec", {}).get("nodeName")),
        _PHASE_RANK.get(status.get("phase", "Pending"), 0),
        pod_ready(pod),
        -restarts,
        _negated(created),
    )


def _negated(stamp: str) -> tuple[int, ...]:
    """Newest first: sorts a timestamp string descending inside an ascending sort."""
    return tuple(-ord(c) for c in stamp)


def seconds_until_available(pod: Obj, min_ready_seconds: int) -> float | None:
    """0 when available, None when not ready at all, else the seconds left."""
    if not pod_ready(pod):
        return None
    if min_ready_seconds <= 0:
        return 0
    for cond in pod.get("status", {}).get("conditions") or []:
        if cond.get("type") == "Ready" and (
            since := names.parse_time(cond.get("lastTransitionTime"))
        ):
            left = min_ready_seconds - (names.now() - since).total_seconds()
            return 0 if left <= 0 else left
    return 0
