"""The scheduler: binds each pending pod to a feasible node, spreading siblings."""

from __future__ import annotations

import copy
from collections import Counter
from decimal import Decimal

from kubesim.cluster.api import is_status_error
from kubesim.cluster.cache import controller_uid
from kubesim.cluster.controller import Context, Controller, Key, Obj, Watch, is_deleting, key_of
from kubesim.cluster.nodes import is_extended_resource
from kubesim.cluster.selectors import (
    labels_of,
    matches_map,
    node_affinity_matches,
    untolerated_taint,
)
from kubesim.cluster.workloads import set_condition
from kubesim.quantity import parse_quantity

COMPONENT = "default-scheduler"
_AFFINITY = "node(s) didn't match Pod's node affinity/selector"


class Scheduler(Controller[Key]):
    name = "scheduler"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.unschedulable: set[Key] = set()

    def watches(self) -> dict[str, Watch]:
        return {
            "pods": self._pod_changed,
            "nodes": self._node_changed,
            "persistentvolumeclaims": self._node_changed,
        }

    def _pod_changed(self, old: Obj | None, new: Obj | None) -> None:
        if new is not None and needs_scheduling(new):
            self.enqueue(key_of(new))
        elif new is None and old is not None:
            self.unschedulable.discard(key_of(old))
        if _frees_resources(old, new):
            # As the scheduler's AssignedPodDelete event: what it held may fit a waiting pod.
            self._node_changed(old, new)

    def _node_changed(self, old: Obj | None, new: Obj | None) -> None:
        """A node (or a claim) that appears or changes may fit a pod that fitted nowhere."""
        for key in list(self.unschedulable):
            self.enqueue(key)

    def resync(self) -> None:
        for pod in self.ctx.cache.list("pods"):
            if needs_scheduling(pod):
                self.enqueue(key_of(pod))

    def reconcile(self, key: Key) -> float | None:
        pod = self.ctx.cache.get("pods", *key)
        if pod is None or not needs_scheduling(pod):
            self.unschedulable.discard(key)
            return None
        nodes = self.ctx.cache.list("nodes")
        feasible, reasons = [], Counter[str]()
        if (problem := self._claim_problem(pod)) is not None:
            reasons[problem] = 0  # a pre-filter failure: no per-node count
        else:
            wanted = requests(pod)
            for node in nodes:
                name = node["metadata"]["name"]
                # The pods themselves matter only to add up requests.
                on_node = self.ctx.cache.pods_on(name) if wanted else []
                if (
                    reason := unfit_reason(pod, node, self.ctx.cache.count_on(name), on_node)
                ) is None:
                    feasible.append(node)
                else:
                    reasons[reason] += 1
        if not feasible:
            self.unschedulable.add(key)
            self._unschedulable(pod, len(nodes), reasons)
            return None
        self.unschedulable.discard(key)
        self._bind(pod, self._pick(pod, feasible))
        return None

    def _claim_problem(self, pod: Obj) -> str | None:
        """VolumeBinding's pre-filter: every claim must exist and (binding is Immediate) be bound."""
        namespace = pod["metadata"]["namespace"]
        for volume in pod["spec"].get("volumes") or []:
            claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
            if not claim:
                continue
            pvc = self.ctx.cache.get("persistentvolumeclaims", namespace, claim)
            if pvc is None:
                return f'persistentvolumeclaim "{claim}" not found'
            if pvc.get("status", {}).get("phase") != "Bound":
                return "pod has unbound immediate PersistentVolumeClaims"
        return None

    def _pick(self, pod: Obj, nodes: list[Obj]) -> Obj:
        """Fewest pods of the same owner first, then the least loaded node (as spreading scores do)."""
        owner = controller_uid(pod)
        siblings = Counter(
            p.get("spec", {}).get("nodeName")
            for p in (self.ctx.cache.owned("pods", owner) if owner else [])
        )

        def score(node: Obj) -> tuple[int, int, float]:
            name = node["metadata"]["name"]
            return siblings[name], self.ctx.cache.count_on(name), self.ctx.ties.random()

        return min(nodes, key=score)

    def _bind(self, pod: Obj, node: Obj) -> None:
        meta, node_name = pod["metadata"], node["metadata"]["name"]
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": meta["name"]}}
        binding["target"] = {"apiVersion": "v1", "kind": "Node", "name": node_name}
        try:
            self.ctx.api.store.bind(meta["namespace"], meta["name"], binding)
            self.ctx.api.refresh("pods", meta["namespace"], meta["name"])
        except Exception as exc:
            if is_status_error(exc, 404) or is_status_error(exc, 409):
                return  # deleted, or bound by someone else meanwhile
            raise
        self.ctx.events.normal(
            pod,
            "Scheduled",
            f"Successfully assigned {meta['namespace']}/{meta['name']} to {node_name}",
            COMPONENT,
        )

    def _unschedulable(self, pod: Obj, total: int, reasons: Counter[str]) -> None:
        detail = ", ".join(f"{n} {r}" if n else r for r, n in sorted(reasons.items()))
        message = (
            f"0/{total} nodes are available: {detail}."
            if total
            else "no nodes available to schedule pods"
        )
        if total:
            message += f" preemption: 0/{total} nodes are available: {total} Preemption is not helpful for scheduling."
        status = copy.deepcopy(pod.get("status") or {})
        cond = {
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": None,
            "reason": "Unschedulable",
            "message": message,
        }
        current = next(
            (c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), None
        )
        if current is not None and current.get("message") == message:
            return
        status["conditions"] = set_condition(status.get("conditions") or [], cond)
        status["phase"] = "Pending"
        try:
            self.ctx.api.update("pods", {**pod, "status": status}, subresource="status")
        except Exception as exc:
            if not is_status_error(exc, 404):
                raise
        self.ctx.events.warning(pod, "FailedScheduling", message, COMPONENT)


def needs_scheduling(pod: Obj) -> bool:
    spec = pod.get("spec", {})
    return (
        not spec.get("nodeName")
        and not is_deleting(pod)
        and spec.get("schedulerName", COMPONENT) == COMPONENT
        and pod.get("status", {}).get("phase") not in ("Succeeded", "Failed")
    )


def unfit_reason(pod: Obj, node: Obj, pod_count: int, pods_on_node: list[Obj]) -> str | None:
    """The filter plugins that matter here, with the scheduler's wording."""
    if node["metadata"].get("deletionTimestamp"):
        return "node(s) were being deleted"
    if node.get("spec", {}).get("unschedulable"):
        return "node(s) were unschedulable"
    if not matches_map(
        pod.get("spec", {}).get("nodeSelector"), labels_of(node)
    ) or not node_affinity_matches(pod, node):
        return _AFFINITY
    if (taint := untolerated_taint(pod, node)) is not None:
        return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value', '')}}}"
    allocatable = node.get("status", {}).get("allocatable", {})
    if pod_count >= int(allocatable.get("pods", "110")):
        return "Too many pods"
    wanted = requests(pod)
    for resource in ("cpu", "memory"):
        if not wanted.get(resource) or resource not in allocatable:
            continue
        used = sum(requests(p).get(resource, 0) for p in pods_on_node if _occupies(p))
        if used + wanted[resource] > parse_quantity(allocatable[resource]):
            return f"Insufficient {resource}"
    # Extended resources (devices) cannot be overcommitted: a node without them has none.
    for resource in sorted(r for r in wanted if wanted[r] and is_extended_resource(r)):
        used = sum(requests(p).get(resource, 0) for p in pods_on_node if _occupies(p))
        if used + wanted[resource] > parse_quantity(allocatable.get(resource, "0")):
            return f"Insufficient {resource}"
    return None


def requests(pod: Obj) -> dict[str, Decimal]:
    """The pod's effective requests: its containers' sum, or an init container's if larger."""
    total: dict[str, Decimal] = {}
    spec = pod.get("spec", {})
    for container in spec.get("containers") or []:
        for resource, value in ((container.get("resources") or {}).get("requests") or {}).items():
            total[resource] = total.get(resource, Decimal(0)) + parse_quantity(value)
    for container in spec.get("initContainers") or []:
        for resource, value in ((container.get("resources") or {}).get("requests") or {}).items():
            total[resource] = max(total.get(resource, Decimal(0)), parse_quantity(value))
    return total


def _frees_resources(old: Obj | None, new: Obj | None) -> bool:
    """A bound pod that went away or finished."""
    if old is None or not old.get("spec", {}).get("nodeName") or not _occupies(old):
        return False
    return new is None or not _occupies(new)


def _occupies(pod: Obj) -> bool:
    return pod.get("status", {}).get("phase") not in ("Succeeded", "Failed")
