"""Which nodes keep pods off, read from the mirrored Nodes (pure): those a node selector
picks, those cordoned, and the taints a pod does not tolerate, as the scheduler and the
DaemonSet controller of Kubernetes v1.28 judge them.

The node selector is read, and the node a DaemonSet pins each pod to: any other required
node affinity (which our operators never set) is left to the scheduler's message.
"""

from __future__ import annotations

from dataclasses import dataclass

from controllers.base import Body
from controllers.conditions import condition_of
from controllers.fields import deep_get
from controllers.wording import plural

# Taints with these effects keep a pod off; PreferNoSchedule only steers it.
_KEEPING_OFF = ("NoSchedule", "NoExecute")
SHOWN = 5  # nodes named in a command; past that the advice says how many more
# Taints the node lifecycle controller keeps while one of a node's conditions holds
# (taint-based evictions): removed by hand, one is back at its next pass, so the node is
# what to fix. key → (the condition, what it means).
CONDITION_TAINTS = {
    "node.kubernetes.io/not-ready": ("Ready", "its kubelet reports it not ready"),
    "node.kubernetes.io/unreachable": ("Ready", "its kubelet stopped reporting"),
    "node.kubernetes.io/memory-pressure": ("MemoryPressure", "it is short of memory"),
    "node.kubernetes.io/disk-pressure": ("DiskPressure", "it is short of disk space"),
    "node.kubernetes.io/pid-pressure": ("PIDPressure", "it is short of process IDs"),
    "node.kubernetes.io/network-unavailable": ("NetworkUnavailable", "its network is not set up"),
}


def _daemon_tolerations(host_network: bool) -> list[Body]:
    """What the DaemonSet controller adds to its pods (daemon/util's
    AddOrUpdateDaemonPodTolerations): they run on cordoned and under-pressure nodes."""
    keys = [("not-ready", "NoExecute"), ("unreachable", "NoExecute"),
            ("disk-pressure", "NoSchedule"), ("memory-pressure", "NoSchedule"),
            ("pid-pressure", "NoSchedule"), ("unschedulable", "NoSchedule")]  # fmt: skip
    if host_network:
        keys.append(("network-unavailable", "NoSchedule"))
    return [
        {"key": f"node.kubernetes.io/{key}", "operator": "Exists", "effect": effect}
        for key, effect in keys
    ]


def tolerates(toleration: Body, taint: Body) -> bool:
    """core/v1 Toleration.ToleratesTaint."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    if toleration.get("operator") == "Exists":
        return True
    return str(toleration.get("value") or "") == str(taint.get("value") or "")


def taint_text(taint: Body) -> str:
    """ "example.com/maintenance=yes:NoSchedule", as kubectl taint writes it."""
    value = taint.get("value")
    return f"{taint.get('key')}{f'={value}' if value else ''}:{taint.get('effect')}"


def untolerated(node: Body, tolerations: list[Body]) -> list[Body]:
    """The node's taints that keep off a pod with `tolerations`."""
    return [
        taint
        for taint in deep_get(node, "spec.taints", []) or []
        if taint.get("effect") in _KEEPING_OFF and not any(tolerates(t, taint) for t in tolerations)
    ]


def selected(nodes: list[Body], selector: dict[str, str]) -> list[Body]:
    """The nodes whose labels hold every pair of `selector`."""
    return [
        node
        for node in nodes
        if all(
            (deep_get(node, "metadata.labels", {}) or {}).get(k) == v for k, v in selector.items()
        )
    ]


def _pinned(pod: Body) -> set[str] | None:
    """The node names a required node affinity on metadata.name allows (how the DaemonSet
    controller pins each of its pods to one node); None if it names none."""
    terms = deep_get(
        pod, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerms", [],
    ) or []  # fmt: skip
    names = {
        str(value)
        for term in terms
        for field in term.get("matchFields") or []
        if field.get("key") == "metadata.name" and field.get("operator") == "In"
        for value in field.get("values") or []
    }
    return names or None


def candidates(nodes: list[Body], pod: Body) -> list[Body]:
    """The nodes the pod may run on by its node selector and, for a DaemonSet's pod, the
    one node it is pinned to."""
    pinned = _pinned(pod)
    return [
        node
        for node in selected(nodes, deep_get(pod, "spec.nodeSelector", {}) or {})
        if pinned is None or deep_get(node, "metadata.name") in pinned
    ]


def cordoned(node: Body) -> bool:
    return bool(deep_get(node, "spec.unschedulable"))


@dataclass(frozen=True)
class KeptOff:
    """The nodes a pod's selector picks, and of those the ones that refuse it, and why."""

    candidates: list[str]  # node names the selector picks
    cordoned: list[str]
    tainted: dict[str, list[str]]  # a taint's text → the nodes with it
    keys: dict[str, str]  # a taint's text → its key (what `kubectl taint ... KEY-` names)


def keeping_off(nodes: list[Body], pod: Body, *, daemon: bool = False) -> KeptOff:
    """Why `pod` (or a DaemonSet's template, `daemon`) may run on none of the nodes its
    selector picks, node by node."""
    spec = pod.get("spec") or {}
    tolerations = list(spec.get("tolerations") or [])
    if daemon:
        tolerations += _daemon_tolerations(bool(spec.get("hostNetwork")))
    chosen = candidates(nodes, pod)
    off = KeptOff([str(deep_get(n, "metadata.name")) for n in chosen], [], {}, {})
    for node in chosen:
        name = str(deep_get(node, "metadata.name"))
        if cordoned(node) and not daemon:  # a DaemonSet's pods tolerate the cordon
            off.cordoned.append(name)
        for taint in untolerated(node, tolerations):
            text = taint_text(taint)
            off.tainted.setdefault(text, []).append(name)
            off.keys[text] = str(taint.get("key"))
    return off


def node_condition(nodes: list[Body] | None, name: str, type_: str) -> Body:
    """The condition of `type_` ("Ready") of the node called `name`, or {} if the mirror
    has no such node or it reports no such condition."""
    node = next((n for n in nodes or [] if deep_get(n, "metadata.name") == name), None)
    return condition_of(node, type_)


def remedy(shown: str, key: str, names: list[str], nodes: list[Body] | None) -> str:
    """What lets pods past the taint `shown` (its `key`) of the nodes `names`: the command
    that removes it, or, for a taint the node controller keeps, what is wrong with the node
    (from its condition, where the mirror has the node) and where to read more."""
    which = named(names) or "NODE"
    if key not in CONDITION_TAINTS:
        return f"remove the taint {shown} (kubectl taint nodes {which} {key}-)"
    type_, meaning = CONDITION_TAINTS[key]
    condition = node_condition(nodes, names[0], type_) if names else {}
    said = ": ".join(str(condition[k]) for k in ("reason", "message") if condition.get(k))
    quoted = f" ({names[0]}: {said})" if said else ""
    return (
        f"make the {plural(len(names) or 2, 'node')} tainted {shown} well again: the node "
        "controller keeps that taint while "
        f"{meaning}{quoted}, whatever removes it (kubectl describe node {which} shows why)"
    )


def named(names: list[str]) -> str:
    """Node names for a kubectl command: all of them, or NODE past SHOWN."""
    return " ".join(names) if len(names) <= SHOWN else "NODE"


def listed(names: list[str]) -> str:
    """Node names for a sentence: "a, b and c", "a, b, c, d, e and 4 more"."""
    if len(names) > SHOWN:
        return f"{', '.join(names[:SHOWN])} and {len(names) - SHOWN} more"
    return " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else "".join(names)


def allocatable(nodes: list[Body], pod: Body, resource: str) -> dict[str, str]:
    """What each node the pod may run on can allocate of `resource`, as its kubelet
    reports it ("0" where it reports none: no device plugin registered it there)."""
    return {
        str(deep_get(node, "metadata.name")): str(
            (deep_get(node, "status.allocatable", {}) or {}).get(resource) or "0"
        )
        for node in candidates(nodes, pod)
    }
