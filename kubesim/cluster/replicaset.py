"""The ReplicaSet controller: keeps `spec.replicas` pods, reports their readiness."""

from __future__ import annotations

import copy
from typing import Any

from kubesim.cluster import names
from kubesim.cluster.controller import (
    Controller,
    Key,
    Obj,
    controller_ref,
    is_deleting,
    pod_ready,
)
from kubesim.cluster.selectors import labels_of
from kubesim.cluster.workloads import (
    adopt_orphans,
    create_with_random_name,
    drop_zero,
    write_status,
)

COMPONENT = "replicaset-controller"
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


class ReplicaSetController(Controller[Key]):
    name = "replicaset"
    resource, owns, kind = "replicasets.apps", "pods", "ReplicaSet"

    def reconcile(self, key: Key) -> float | None:
        rs = self.current(key)
        if rs is None:
            return None
        pods = active_pods(self.ctx.cache.owned("pods", rs["metadata"]["uid"]))
        replicas = int(rs["spec"].get("replicas", 1))
        if len(pods) < replicas:
            pods += active_pods(adopt_orphans(self.ctx, "pods", rs))
        diff = len(pods) - replicas
        if diff < 0:
            for _ in range(-diff):
                pods.append(self._create_pod(rs))
        elif diff > 0:
            for pod in sorted(pods, key=deletion_rank)[:diff]:
                self._delete_pod(rs, pod)
                pods.remove(pod)
        return self._write_status(rs, pods)

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

    def _write_status(self, rs: Obj, pods: list[Obj]) -> float | None:
        template_labels = (rs["spec"].get("template") or {}).get("metadata", {}).get("labels") or {}
        min_ready = int(rs["spec"].get("minReadySeconds") or 0)
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
        write_status(self.ctx, "replicasets.apps", rs, drop_zero(status, keep=("replicas",)))
        return recheck


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
