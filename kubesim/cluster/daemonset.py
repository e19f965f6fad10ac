"""The DaemonSet controller: one pod on every node that matches, replaced on template change."""

from __future__ import annotations

import copy
from typing import Any

from kubesim.cluster import names
from kubesim.cluster.controller import (
    Controller,
    Key,
    Obj,
    Watch,
    controller_ref,
    is_deleting,
    pod_ready,
)
from kubesim.cluster.replicaset import seconds_until_available
from kubesim.cluster.selectors import (
    labels_of,
    matches_map,
    node_affinity_matches,
    untolerated_taint,
)
from kubesim.cluster.workloads import create_with_random_name, drop_zero, write_status

COMPONENT = "daemonset-controller"
REVISION_LABEL = "controller-revision-hash"
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

    def watches(self) -> dict[str, Watch]:
        return {**super().watches(), "nodes": lambda old, new: self.resync()}

    def reconcile(self, key: Key) -> float | None:
        ds = self.current(key)
        if ds is None:
            return None
        revision = names.template_hash(ds["spec"]["template"])
        template = daemon_template(ds)
        nodes = {n["metadata"]["name"]: n for n in self.ctx.cache.list("nodes")}
        eligible = {name for name, node in nodes.items() if should_run(template, node)}
        by_node: dict[str, list[Obj]] = {}
        for pod in self.ctx.cache.owned("pods", ds["metadata"]["uid"]):
            by_node.setdefault(target_node(pod) or "", []).append(pod)
        for node_name in sorted(eligible):
            live = [p for p in by_node.get(node_name, []) if not is_deleting(p)]
            if not live:
                self._create_pod(ds, template, node_name, revision)
            for extra in live[1:]:
                self._delete_pod(ds, extra)
        for node_name, pods in by_node.items():
            if node_name not in eligible:
                for pod in pods:
                    if not is_deleting(pod):
                        self._delete_pod(ds, pod)
        self._roll(ds, by_node, eligible, revision)
        self._write_status(ds, eligible, revision)
        return None

    def _roll(
        self, ds: Obj, by_node: dict[str, list[Obj]], eligible: set[str], revision: str
    ) -> None:
        """RollingUpdate: replace outdated pods while at most maxUnavailable are down."""
        strategy = ds["spec"].get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        budget = _max_unavailable(strategy, len(eligible))
        pods = [p for n in eligible for p in by_node.get(n, [])]
        unavailable = sum(
            1
            for n in eligible
            if not any(pod_ready(p) and not is_deleting(p) for p in by_node.get(n, []))
        )
        for pod in sorted(pods, key=lambda p: pod_ready(p)):
            if unavailable >= budget:
                return
            if is_deleting(pod) or labels_of(pod).get(REVISION_LABEL) == revision:
                continue
            self._delete_pod(ds, pod)
            if pod_ready(pod):
                unavailable += 1

    def _create_pod(self, ds: Obj, template: Obj, node_name: str, revision: str) -> None:
        pod_template = copy.deepcopy(template)
        labels = dict(pod_template.get("metadata", {}).get("labels") or {})
        labels |= {
            REVISION_LABEL: revision,
            GENERATION_LABEL: str(ds["metadata"].get("generation", 1)),
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
        created = create_with_random_name(self.ctx, self.rng, "pods", pod, ds["metadata"]["name"])
        self.ctx.events.normal(
            ds, "SuccessfulCreate", f"Created pod: {created['metadata']['name']}", COMPONENT
        )

    def _delete_pod(self, ds: Obj, pod: Obj) -> None:
        meta = pod["metadata"]
        self.ctx.api.delete("pods", meta["namespace"], meta["name"])
        self.ctx.events.normal(ds, "SuccessfulDelete", f"Deleted pod: {meta['name']}", COMPONENT)

    def _write_status(self, ds: Obj, eligible: set[str], revision: str) -> None:
        pods = [
            p for p in self.ctx.cache.owned("pods", ds["metadata"]["uid"]) if not is_deleting(p)
        ]
        scheduled = {target_node(p) for p in pods}
        on_eligible = [p for p in pods if target_node(p) in eligible]
        min_ready = int(ds["spec"].get("minReadySeconds") or 0)
        available = sum(seconds_until_available(p, min_ready) == 0 for p in on_eligible)
        status = {
            "currentNumberScheduled": len(scheduled & eligible),
            "numberMisscheduled": len(scheduled - eligible - {None}),
            "desiredNumberScheduled": len(eligible),
            "numberReady": sum(pod_ready(p) for p in on_eligible),
            "observedGeneration": ds["metadata"].get("generation", 1),
            "updatedNumberScheduled": sum(
                labels_of(p).get(REVISION_LABEL) == revision for p in on_eligible
            ),
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


def should_run(template: Obj, node: Obj) -> bool:
    pod: dict[str, Any] = {"spec": template.get("spec") or {}}
    return (
        matches_map(pod["spec"].get("nodeSelector"), labels_of(node))
        and node_affinity_matches(pod, node)
        and untolerated_taint(pod, node) is None
    )


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


def _max_unavailable(strategy: Obj, total: int) -> int:
    value = (strategy.get("rollingUpdate") or {}).get("maxUnavailable", 1)
    if isinstance(value, str) and value.endswith("%"):
        return max(int(value[:-1]) * total // 100, 1)
    return max(int(value), 1)
