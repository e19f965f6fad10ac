"""Findings about a CR's pods on a node that stopped reporting (kubelet down, node lost),
one per node, with what Kubernetes does next for each workload there (pure).

Which pods are lost is controllers.unready's rule, the one the CR's NodeLost condition
follows; here it is told with what the mirror adds: how long, the Deployment behind a
ReplicaSet, how soon the eviction comes, and the forced delete a StatefulSet's pod needs.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from controllers.base import Body
from controllers.conditions import parse_time
from controllers.fields import controlling_ref, deep_get
from controllers.unready import (
    NOT_READY_TAINT,
    UNREACHABLE_TAINT,
    eviction_toleration,
    lost_next_step,
    lost_pods,
    ready_since,
)
from controllers.wording import count
from opsboard.diagnosis.nodes import node_condition
from opsboard.diagnosis.observed import (
    RANK_PODS,
    Finding,
    Observed,
    Section,
    ago,
    name_of,
    of_kind,
    on_nodes,
)


def _workload(observed: Observed, pod: Body) -> tuple[str, str]:
    """(kind, name) of what makes the pod: a ReplicaSet's Deployment, a StatefulSet, a
    DaemonSet; ("", "") for a pod nothing controls."""
    ref = controlling_ref(deep_get(pod, "metadata.ownerReferences")) or {}
    kind, name = str(ref.get("kind", "")), str(ref.get("name", ""))
    if kind == "ReplicaSet":
        replicaset = next(
            (r for r in of_kind(observed.objects, "ReplicaSet") if name_of(r) == name), {}
        )
        owner = controlling_ref(deep_get(replicaset, "metadata.ownerReferences")) or {}
        if owner.get("kind") == "Deployment":
            return "Deployment", str(owner.get("name"))
    return kind, name


def _when(pods: list[Body], now: datetime, taint: str) -> str:
    """How soon Kubernetes evicts the pods: their toleration runs from about when their
    Ready turned False (the unreachable taint follows within the controller's next pass)."""
    seconds = eviction_toleration(pods[0], taint)
    if seconds is None:
        return ""
    flipped = ready_since(pods[0])
    due = flipped + timedelta(seconds=seconds) if flipped else None
    left = (due - now).total_seconds() if due else 0.0
    if left <= 0:
        return ", any moment now"
    return f", in about {int(left)} s" if left < 120 else f", in about {round(left / 60)} min"


def _node_state(observed: Observed, node: str) -> tuple[str, str, str]:
    """(what the node is, what to do, the taint that evicts its pods) from its Ready
    condition where the mirror has the node: a kubelet that says why it is not ready is not
    one that stopped reporting."""
    ready = node_condition(observed.nodes, node, "Ready")
    if ready.get("status") == "False":
        said = ": ".join(str(ready[k]) for k in ("reason", "message") if ready.get(k))
        return (
            f"is not ready, its kubelet says ({said or 'no reason given'})",
            f"Fix what the kubelet of node {node} reports (kubectl describe node {node} shows "
            "its conditions and events).",
            NOT_READY_TAINT,
        )
    heard = parse_time(ready.get("lastHeartbeatTime")) if ready.get("status") == "Unknown" else None
    when = f", last heard from {ago(heard, observed.now)} ago" if heard else ""
    return (
        f"stopped reporting (its kubelet is down or the node is lost{when})",
        f"See why node {node} stopped reporting (kubectl describe node {node}) and bring the "
        "node or its kubelet back.",
        UNREACHABLE_TAINT,
    )


def lost_node_findings(observed: Observed) -> list[Finding]:
    """The CR's pods on a node that stopped reporting, one finding per node: the pods' own
    status tells it, the node's Ready condition (when mirrored) how, and since when. An
    evicted pod stays (Terminating) until its node confirms; only a StatefulSet's waits on
    it, so those count (controllers.unready)."""
    now = observed.now
    if now is None:
        return []
    by_node: dict[str, list[Body]] = {}
    for pod in lost_pods([o for o in observed.objects if o.get("kind") == "Pod"]):
        by_node.setdefault(str(deep_get(pod, "spec.nodeName")), []).append(pod)
    found = []
    for node, lost in sorted(by_node.items()):
        since = min((t for p in lost if (t := ready_since(p))), default=None)
        names = [name_of(p) for p in lost]
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        by_workload: dict[tuple[str, str], list[Body]] = {}
        for pod in lost:
            by_workload.setdefault(_workload(observed, pod), []).append(pod)
        head, todo, taint = _node_state(observed, node)
        steps = [
            lost_next_step(ps, node, kind=k, name=n, when=_when(ps, now, taint), taint=taint)
            for (k, n), ps in by_workload.items()
        ]
        stateful = [p for (k, _), ps in by_workload.items() if k == "StatefulSet" for p in ps]
        if stateful:
            namespace = deep_get(stateful[0], "metadata.namespace", "")
            todo += (
                " If the node is gone for good, make sure it is really down (a pod deleted by "
                "force while it still runs there would run twice), then: kubectl -n "
                f"{namespace} delete pod {' '.join(name_of(p) for p in stateful)} --force "
                "--grace-period=0"
            )
        found.append(
            Finding(
                RANK_PODS,
                "NodeLost",
                f"Node {node} {head}: "
                f"{count(len(lost), 'pod')} on it not ready for {ago(since, now)} ({shown}). "
                f"{'. '.join(steps)}.",
                on_nodes(observed, todo),
                subject=f"Node {node}",
                see=Section.TREE,
            )
        )
    return found
