"""The DaemonSet rolling update, decided as pkg/controller/daemon/update.go decides it (pure).

Without surge, old pods that are not available are deleted at once, uncounted against
maxUnavailable; available old pods then go at most maxUnavailable at a time, less the nodes
already down. With surge, a new pod is started beside an old one that is not available at
once, and beside at most maxSurge available ones; an old pod goes when its new one is
available.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from kubesim.cluster.controller import Obj, is_deleting
from kubesim.cluster.replicaset import seconds_until_available
from kubesim.cluster.selectors import labels_of

REVISION_LABEL = "controller-revision-hash"

Pair = tuple[Obj | None, Obj | None]  # a node's new and old pod
Available = Callable[[Obj], bool]


@dataclass(frozen=True)
class Limits:
    """maxSurge and maxUnavailable scaled to the nodes that should run a daemon pod."""

    max_surge: int
    max_unavailable: int


@dataclass(frozen=True)
class Plan:
    """What one rolling-update pass does: the old pods to delete, the nodes to surge onto."""

    delete: tuple[Obj, ...] = ()
    create_on: tuple[str, ...] = ()


def limits(ds: Obj, desired: int) -> Limits | None:
    """updatedDesiredNodeCounts; None under OnDelete. Percentages round up."""
    strategy = ds["spec"].get("updateStrategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return None
    rolling = strategy.get("rollingUpdate") or {}
    surge = _scaled(rolling.get("maxSurge", 0), desired)
    unavailable = _scaled(rolling.get("maxUnavailable", 1), desired)
    if desired > 0 and surge == 0 and unavailable == 0:
        unavailable = 1  # an impossible configuration obeys the default
    return Limits(surge, unavailable)


def allows_surge(ds: Obj) -> bool:
    """util.AllowsSurge: maxSurge scaled to one node is above zero."""
    found = limits(ds, 1)
    return found is not None and found.max_surge > 0


def pod_order(pod: Obj) -> tuple[bool, str, str]:
    """podByCreationTimestampAndPhase: scheduled pods first, then the oldest, then by name."""
    meta = pod["metadata"]
    scheduled = bool(pod.get("spec", {}).get("nodeName"))
    return (not scheduled, meta.get("creationTimestamp") or "", meta["name"])


def is_updated(pod: Obj, revision: str) -> bool:
    return labels_of(pod).get(REVISION_LABEL) == revision


def is_available(pod: Obj, min_ready_seconds: int) -> bool:
    return seconds_until_available(pod, min_ready_seconds) == 0


def new_and_old(pods: list[Obj], revision: str) -> Pair | None:
    """findUpdatedPodsOnNode: the node's one new and one old pod not being deleted; None
    when it has more of either (the manage loop prunes those first)."""
    new: Obj | None = None
    old: Obj | None = None
    for pod in pods:
        if is_deleting(pod):
            continue
        if is_updated(pod, revision):
            if new is not None:
                return None
            new = pod
        else:
            if old is not None:
                return None
            old = pod
    return new, old


def plan(
    by_node: dict[str, list[Obj]],
    eligible: set[str],
    revision: str,
    bounds: Limits,
    min_ready_seconds: int,
) -> Plan:
    """rollingUpdate over the nodes that have daemon pods or should have one."""
    nodes = sorted(set(by_node) | eligible)  # Go walks a map; a fixed order keeps runs repeatable
    pairs = [(node, new_and_old(by_node.get(node, []), revision)) for node in nodes]

    def available(pod: Obj) -> bool:
        return is_available(pod, min_ready_seconds)

    if bounds.max_surge == 0:
        return _plan_unavailable(pairs, bounds.max_unavailable, available)
    return _plan_surge(pairs, bounds.max_surge, available)


def _plan_unavailable(
    pairs: list[tuple[str, Pair | None]], max_unavailable: int, available: Available
) -> Plan:
    down = 0
    replace: list[Obj] = []  # old and not available: replaced right away
    candidates: list[Obj] = []  # old and available: replaced within maxUnavailable
    for _, found in pairs:
        if found is None:
            down += 1
            continue
        new, old = found
        if (new is None) == (old is None):
            down += 1  # no pod yet, or both: the manage loop acts, the node counts as down
        elif new is not None:
            down += not available(new)
        elif old is not None and not available(old):
            replace.append(old)
        elif old is not None and down < max_unavailable:
            candidates.append(old)
    room = max(0, min(max_unavailable - down, len(candidates)))
    return Plan(delete=(*replace, *candidates[:room]))


def _plan_surge(pairs: list[tuple[str, Pair | None]], max_surge: int, available: Available) -> Plan:
    surging = 0
    delete: list[Obj] = []
    replace: list[str] = []  # old and not available: a new pod at once
    candidates: list[str] = []  # old and available: a new pod within maxSurge
    for node, found in pairs:
        if found is None:
            surging += 1
            continue
        new, old = found
        if old is None:
            continue  # the manage loop creates the pod a node lacks
        if new is None:
            if not available(old):
                replace.append(node)
            elif surging < max_surge:
                candidates.append(node)
        elif available(new):
            delete.append(old)
        else:
            surging += 1
    room = max(0, min(max_surge - surging, len(candidates)))
    return Plan(delete=tuple(delete), create_on=(*replace, *candidates[:room]))


def _scaled(value: int | str | None, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent, rounding up."""
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value or 0)
