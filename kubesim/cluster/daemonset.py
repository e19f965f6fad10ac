"""The DaemonSet controller: one pod on every node that matches, replaced on template change."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import Any

from kubesim.cluster import daemonset_update as update
from kubesim.cluster import history, names
from kubesim.cluster.controller import (
    Context,
    Controller,
    Key,
    Obj,
    Watch,
    controller_ref,
    is_deleting,
    pod_ready,
)
from kubesim.cluster.daemonset_update import REVISION_LABEL, pod_order
from kubesim.cluster.refusals import PodRefused, Refusals
from kubesim.cluster.replicaset import seconds_until_available
from kubesim.cluster.selectors import (
    labels_of,
    matches_map,
    node_affinity_matches,
    untolerated_taint,
)
from kubesim.cluster.workloads import (
    create_with_random_name,
    drop_zero,
    min_ready_seconds,
    write_status,
)
from kubesim.defaults import TEMPLATE_GENERATION
from kubesim.errors import ApiError

COMPONENT = "daemonset-controller"
FINISHED = ("Succeeded", "Failed")
FAILED_BACKOFF_START, FAILED_BACKOFF_MAX = 1.0, 900.0  # seconds
GENERATION_LABEL = "pod-template-generation"

# util.AddOrUpdateDaemonPodTolerations: daemons stay through node trouble.
DAEMON_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


class DaemonSetController(Controller[Key]):
    name = "daemonset"
    resource, owns, kind = "daemonsets.apps", "pods", "DaemonSet"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.refusals = Refusals(ctx, COMPONENT)
        # (DaemonSet uid, node) -> (back-off, since when) for its finished pods
        self._failed_backoff: dict[tuple[str, str], tuple[float, float]] = {}

    def watches(self) -> dict[str, Watch]:
        return {**super().watches(), "nodes": lambda old, new: self.resync()}

    def reconcile(self, key: Key) -> float | None:
        ds = self.current(key)
        if ds is None:
            return None
        revision = names.template_hash(ds["spec"]["template"])
        owned = self.ctx.cache.owned("pods", ds["metadata"]["uid"])
        running = {labels_of(p).get(REVISION_LABEL) for p in owned}
        live = {f"{ds['metadata']['name']}-{h}" for h in running if h}
        history.record(self.ctx, ds, revision, REVISION_LABEL, live)
        template = daemon_template(ds)
        nodes = {n["metadata"]["name"]: n for n in self.ctx.cache.list("nodes")}
        placed = placement(template, nodes)
        eligible = placed.run
        try:
            again = self._manage(ds, template, set(nodes), placed, revision)
            if bounds := update.limits(ds, len(eligible)):
                min_ready = min_ready_seconds(ds)
                step = update.plan(self._pods_by_node(ds), eligible, revision, bounds, min_ready)
                for pod in step.delete:
                    self._delete_pod(ds, pod)
                for node_name in step.create_on:
                    self._create_pod(ds, template, node_name, revision)
        except PodRefused:
            recheck = self._write_status(ds, set(nodes), eligible, revision)
            backoff = self.refusals.backoff(key)
            return backoff if recheck is None else min(recheck, backoff)
        self.refusals.clear(key)
        recheck = self._write_status(ds, set(nodes), eligible, revision)
        return min((t for t in (recheck, again) if t is not None), default=None)

    def _pods_by_node(self, ds: Obj) -> dict[str, list[Obj]]:
        """getNodesToDaemonPods: the daemon's pods by target node, less the finished ones
        being deleted (a pod without a target node is not the daemon's to place)."""
        by_node: dict[str, list[Obj]] = {}
        for pod in self.ctx.cache.owned("pods", ds["metadata"]["uid"]):
            finished = pod.get("status", {}).get("phase") in FINISHED
            if (finished and is_deleting(pod)) or not (node := target_node(pod)):
                continue
            by_node.setdefault(node, []).append(pod)
        return by_node

    def _manage(
        self,
        ds: Obj,
        template: Obj,
        nodes: set[str],
        placed: Placement,
        revision: str,
    ) -> float | None:
        """podsShouldBeOnNode: a pod where one should run and is missing; none where none
        may go on running; finished pods deleted (a failed one told, and backed off per
        node: a kubelet that rejects the pod would otherwise fight the controller); and no
        more than one running pod per node (one old beside one new while surging).
        Returns when to look again at a node in back-off."""
        surge = update.allows_surge(ds)
        min_ready = min_ready_seconds(ds)
        by_node = self._pods_by_node(ds)
        wait: float | None = None
        for node_name in sorted(placed.run - set(by_node)):
            self._create_pod(ds, template, node_name, revision)
        for node_name, pods in sorted(by_node.items()):
            live = sorted((p for p in pods if not is_deleting(p)), key=pod_order)
            if node_name not in nodes:
                # Unscheduled pods aimed at a node that is gone: the pod GC never sees them.
                for pod in live:
                    if not pod.get("spec", {}).get("nodeName"):
                        self._delete_pod(ds, pod)
                continue
            if node_name not in placed.keep:
                for pod in live:
                    self._delete_pod(ds, pod)
                continue
            running = [p for p in live if p.get("status", {}).get("phase") not in FINISHED]
            finished = [p for p in live if p not in running]
            if finished and (delay := self._delete_finished(ds, node_name, finished)):
                wait = delay if wait is None else min(wait, delay)
            if not surge:  # a pod being deleted holds its node: no new one until it is gone
                for extra in running[1:]:
                    self._delete_pod(ds, extra)
            elif not live and node_name in placed.run:
                self._create_pod(ds, template, node_name, revision)
            else:
                for pod in _surplus_while_surging(running, revision, min_ready):
                    self._delete_pod(ds, pod)
        return wait

    def _delete_finished(self, ds: Obj, node_name: str, pods: list[Obj]) -> float | None:
        """Deletes a node's finished daemon pods unless the node is in back-off (1 s,
        doubling to 15 min, as failedPodsBackoff); then returns how long it has left."""
        key = (ds["metadata"]["uid"], node_name)
        now = time.monotonic()
        duration, since = self._failed_backoff.get(key, (0.0, 0.0))
        if now - since < duration:
            return duration - (now - since)
        fresh = duration == 0 or now - since > 2 * FAILED_BACKOFF_MAX
        duration = FAILED_BACKOFF_START if fresh else min(duration * 2, FAILED_BACKOFF_MAX)
        self._failed_backoff[key] = (duration, now)
        for pod in pods:
            meta = pod["metadata"]
            if pod.get("status", {}).get("phase") == "Failed":
                message = (
                    f"Found failed daemon pod {meta['namespace']}/{meta['name']} on node "
                    f"{node_name}, will try to kill it"
                )
                self.ctx.events.warning(ds, "FailedDaemonPod", message, COMPONENT)
            self._delete_pod(ds, pod)
        return None

    def _create_pod(self, ds: Obj, template: Obj, node_name: str, revision: str) -> None:
        pod_template = copy.deepcopy(template)
        labels = dict(pod_template.get("metadata", {}).get("labels") or {})
        labels |= {
            REVISION_LABEL: revision,
            GENERATION_LABEL: (ds["metadata"].get("annotations") or {}).get(
                TEMPLATE_GENERATION, "1"
            ),
        }
        spec = pod_template.get("spec") or {}
        spec["affinity"] = {
            **(spec.get("affinity") or {}),
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [node_name]}
                            ]
                        }
                    ]
                }
            },
        }
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "namespace": ds["metadata"]["namespace"],
                "labels": labels,
                "ownerReferences": [controller_ref(ds)],
            },
            "spec": spec,
        }
        try:
            created = create_with_random_name(
                self.ctx, self.rng, "pods", pod, ds["metadata"]["name"]
            )
        except ApiError as exc:
            raise self.refusals.tell(ds, exc, f"Error creating: {exc.message}") from exc
        self.ctx.events.normal(
            ds, "SuccessfulCreate", f"Created pod: {created['metadata']['name']}", COMPONENT
        )

    def _delete_pod(self, ds: Obj, pod: Obj) -> None:
        meta = pod["metadata"]
        self.ctx.api.delete("pods", meta["namespace"], meta["name"])
        self.ctx.events.normal(ds, "SuccessfulDelete", f"Deleted pod: {meta['name']}", COMPONENT)

    def _write_status(
        self, ds: Obj, nodes: set[str], eligible: set[str], revision: str
    ) -> float | None:
        """updateDaemonSetStatus: each node that should run a daemon is told by its oldest pod.

        Returns when to look again: a ready pod becomes available after minReadySeconds.
        """
        by_node = self._pods_by_node(ds)
        min_ready = min_ready_seconds(ds)
        current = ready = available = updated = 0
        wait: float | None = None
        for node_name in eligible:
            if not (pods := by_node.get(node_name)):
                continue
            current += 1
            pod = min(pods, key=pod_order)
            updated += update.is_updated(pod, revision)
            left = seconds_until_available(pod, min_ready)
            ready += left is not None
            available += left == 0
            if left:
                wait = left if wait is None else min(wait, left)
        status = {
            "currentNumberScheduled": current,
            "numberMisscheduled": sum(1 for n in nodes - eligible if by_node.get(n)),
            "desiredNumberScheduled": len(eligible),
            "numberReady": ready,
            "observedGeneration": ds["metadata"].get("generation", 1),
            "updatedNumberScheduled": updated,
            "numberAvailable": available,
            "numberUnavailable": len(eligible) - available,
        }
        keep = (
            "currentNumberScheduled",
            "numberMisscheduled",
            "desiredNumberScheduled",
            "numberReady",
        )
        write_status(self.ctx, "daemonsets.apps", ds, drop_zero(status, keep=keep))
        return wait


def daemon_template(ds: Obj) -> Obj:
    template: Obj = copy.deepcopy(ds["spec"]["template"])
    spec = template.setdefault("spec", {})
    tolerations = spec.setdefault("tolerations", [])
    for tol in DAEMON_TOLERATIONS:
        if not any(
            t.get("key") == tol["key"] and t.get("effect") == tol["effect"] for t in tolerations
        ):
            tolerations.append(dict(tol))
    return template


@dataclass(frozen=True)
class Placement:
    run: set[str]  # nodes that should run a daemon pod
    keep: set[str]  # nodes whose daemon pod may go on running: `run`, and the nodes whose
    # untolerated taints are all NoSchedule (they keep what already runs there)


def placement(template: Obj, nodes: dict[str, Obj]) -> Placement:
    """NodeShouldRunDaemonPod's (shouldRun, shouldContinueRunning) for every node."""
    pod: dict[str, Any] = {"spec": template.get("spec") or {}}
    run, keep = set(), set()
    for name, node in nodes.items():
        if not (
            matches_map(pod["spec"].get("nodeSelector"), labels_of(node))
            and node_affinity_matches(pod, node)
        ):
            continue
        if untolerated_taint(pod, node) is None:
            run.add(name)
            keep.add(name)
        elif untolerated_taint(pod, node, effects=("NoExecute",)) is None:
            keep.add(name)
    return Placement(run, keep)


def target_node(pod: Obj) -> str | None:
    """Where a daemon pod is, or is pinned to by its node affinity before it is scheduled."""
    node: str | None = pod.get("spec", {}).get("nodeName")
    if node:
        return node
    terms = (
        pod.get("spec", {})
        .get("affinity", {})
        .get("nodeAffinity", {})
        .get("requiredDuringSchedulingIgnoredDuringExecution", {})
        .get("nodeSelectorTerms")
        or []
    )
    for term in terms:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("values"):
                name: str = field["values"][0]
                return name
    return None


def _surplus_while_surging(live: list[Obj], revision: str, min_ready_seconds: int) -> list[Obj]:
    """The node's pods beyond its oldest new and oldest old one (`live` oldest first); the
    old one too once it is not ready or the new one is available."""
    new: Obj | None = None
    old: Obj | None = None
    surplus: list[Obj] = []
    for pod in live:
        if update.is_updated(pod, revision):
            if new is None:
                new = pod
                continue
        elif old is None:
            old = pod
            continue
        surplus.append(pod)
    if (
        new is not None
        and old is not None
        and (not pod_ready(old) or update.is_available(new, min_ready_seconds))
    ):
        surplus.append(old)
    return surplus
