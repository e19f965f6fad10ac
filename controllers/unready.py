"""Pods that are not ready and are not starting either (pure): those on a node that stopped
reporting, and those whose readiness probe keeps failing past a grace.

One definition of each for the CR's status (controllers.workload, controllers.ptemplate)
and for the diagnosis (opsboard.diagnosis), so the two never tell a pod differently.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from controllers.base import Body
from controllers.conditions import condition_of, parse_time
from controllers.fields import controlling_ref, deep_get
from controllers.pods import PULL_FAILURES, START_FAILURES, crashing, waiting
from controllers.wording import count, plural

# How long a running container may stay unready before it counts as failing rather than
# starting: a readiness probe passes after its initialDelaySeconds and a period or two,
# and a blip of a failing probe (a slow request) is over in a few periods.
# OPSBOARD_UNREADY_GRACE_SECONDS changes it (controllers.graces).
UNREADY_GRACE_SECONDS = 30.0
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
NOT_READY_TAINT = "node.kubernetes.io/not-ready"  # a kubelet that reports its node unwell
_NODE_THAT = {UNREACHABLE_TAINT: "an unreachable node", NOT_READY_TAINT: "a node not ready"}
# For a reader that does not know which of the two the node has (a status): both named.
_EITHER = "a node unreachable or not ready"
_STATE = {UNREACHABLE_TAINT: "unreachable", NOT_READY_TAINT: "not ready"}


def lost(pod: Body) -> bool:
    """A running pod whose node stopped reporting: the node lifecycle controller turned its
    Ready condition False (MarkPodsNotReady: status only, no reason) while its containers
    still say ready, as the kubelet last reported them before it went silent."""
    ready = condition_of(pod, "Ready")
    statuses = deep_get(pod, "status.containerStatuses", []) or []
    return bool(
        deep_get(pod, "status.phase") == "Running"
        and deep_get(pod, "spec.nodeName")
        and ready.get("status") == "False"
        and not ready.get("reason")
        and statuses
        and all(s.get("ready") for s in statuses)
    )


def held(pod: Body) -> bool:
    """An evicted pod that its StatefulSet waits on: it replaces a pod only once it is gone,
    and a pod on a lost node stays Terminating until the node confirms. (A Deployment's or
    DaemonSet's evicted pod is replaced at once: its replacement counts as starting.)"""
    owner = controlling_ref(deep_get(pod, "metadata.ownerReferences")) or {}
    return bool(deep_get(pod, "metadata.deletionTimestamp")) and owner.get("kind") == "StatefulSet"


def lost_pods(pods: list[Body]) -> list[Body]:
    """`pods`' on a node that stopped reporting: the live ones and the held ones."""
    return [
        p for p in pods if lost(p) and (not deep_get(p, "metadata.deletionTimestamp") or held(p))
    ]


def ready_since(pod: Body) -> datetime | None:
    """When the pod's Ready condition last changed."""
    return parse_time(condition_of(pod, "Ready").get("lastTransitionTime"))


def eviction_toleration(pod: Body, taint: str = UNREACHABLE_TAINT) -> float | None:
    """How long the pod stays on a node with the NoExecute `taint` (unreachable, or not
    ready) before it is evicted (seconds; 300 by the DefaultTolerationSeconds admission
    plugin), None if it tolerates one for ever (a DaemonSet's pods do)."""
    matching = [
        t
        for t in deep_get(pod, "spec.tolerations", []) or []
        if t.get("key") in (taint, "", None) and t.get("effect") in ("NoExecute", "", None)
    ]
    if not matching:
        return 0.0
    limits = [t.get("tolerationSeconds") for t in matching]
    return None if None in limits else float(max(0, min(int(v) for v in limits)))


@dataclass(frozen=True)
class Failing:
    """A running pod whose containers have started but stay unready: a readiness probe."""

    pod: Body
    containers: list[str]  # the unready ones, by name
    since: datetime  # the later of their start and the pod's Ready turning False


def failing_readiness(pod: Body, *, now: datetime | None) -> Failing | None:
    """The pod if its containers run and have started but some are not ready, whatever the
    grace. None while a pod starts, stops or is stuck another way (a crash loop at `now`, an
    image pull: other rules say those), on a lost node (its Ready has no reason), or
    undated."""
    ready = condition_of(pod, "Ready")
    if (
        deep_get(pod, "status.phase") != "Running"
        or ready.get("status") != "False"
        or ready.get("reason") != "ContainersNotReady"
        or waiting([pod], PULL_FAILURES + START_FAILURES)
        or crashing([pod], now=now)
    ):
        return None
    statuses = deep_get(pod, "status.containerStatuses", []) or []
    unready = [s for s in statuses if not s.get("ready")]
    running = [s for s in unready if s.get("started") and deep_get(s, "state.running")]
    if not unready or len(running) < len(unready):
        return None  # one is still starting, or stopped
    stamps = [parse_time(deep_get(s, "state.running.startedAt")) for s in running]
    stamps.append(parse_time(ready.get("lastTransitionTime")))
    known = [t for t in stamps if t is not None]
    if not known:
        return None
    return Failing(pod, [str(s.get("name")) for s in running], max(known))


def probe_window(found: Failing) -> float:
    """How long its unready containers' readiness probes may take to pass once they start:
    initialDelaySeconds, then failureThreshold periods (by the API's defaults 0 + 3 periods
    of 10 s, UNREADY_GRACE_SECONDS). A slow app's probe starts late: until then it starts."""
    containers: list[Body] = deep_get(found.pod, "spec.containers", []) or []
    probes = [
        c.get("readinessProbe") or {} for c in containers if c.get("name") in found.containers
    ]
    return max(
        (
            float(p.get("initialDelaySeconds", 0))
            + float(p.get("periodSeconds", 10)) * float(p.get("failureThreshold", 3))
            for p in probes
        ),
        default=0.0,
    )


@dataclass(frozen=True)
class Unready:
    """The pods that are not ready and not starting, and when that may change by itself."""

    lost: list[Body]  # on a node that stopped reporting (lost_pods)
    failing: list[Failing]  # unready past the grace: a readiness probe that fails
    recheck: float | None  # seconds until the first pod within the grace passes it, if any


def unready(
    pods: list[Body], *, now: datetime | None, grace: float = UNREADY_GRACE_SECONDS
) -> Unready:
    """`pods`' lost ones, and their live ones whose readiness has failed for longer than
    `grace` at `now`, or than their probes' own window where that is longer (probe_window;
    none if `now` is unknown: they may still be starting)."""
    failing, left = [], []
    for pod in pods:
        if deep_get(pod, "metadata.deletionTimestamp") or now is None:
            continue
        if (found := failing_readiness(pod, now=now)) is None:
            continue
        waited = (now - found.since).total_seconds()
        allowed = max(grace, probe_window(found))
        if waited > allowed:
            failing.append(found)
        else:
            # Times have whole seconds: one more makes sure the grace is over by then.
            left.append(allowed - waited + 1.0)
    return Unready(lost_pods(pods), failing, min(left, default=None))


def probe_text(pod: Body, container: str) -> str:
    """What the container's readiness probe asks, as kubectl describe words it: "GET
    :80/healthz", "TCP :6379"; "" if its spec has none (or an unknown kind)."""
    containers: list[Body] = deep_get(pod, "spec.containers", []) or []
    spec = next((c for c in containers if c.get("name") == container), {})
    probe = spec.get("readinessProbe") or {}
    if http := probe.get("httpGet"):
        scheme = "HTTPS " if http.get("scheme") == "HTTPS" else ""
        return f"{scheme}GET :{http.get('port')}{http.get('path', '/')}"
    if tcp := probe.get("tcpSocket"):
        return f"TCP :{tcp.get('port')}"
    if grpc := probe.get("grpc"):
        return f"gRPC :{grpc.get('port')}"
    if command := deep_get(probe, "exec.command"):
        return f"exec {' '.join(str(c) for c in command)}"
    return ""


def failing_words(found: Failing) -> tuple[str, str]:
    """(which, asks): "container web fails its readiness probe" or "containers a, b fail
    their readiness probes", and " (GET :80/healthz)" where their specs tell the probe."""
    containers = found.containers
    probes = [text for c in containers if (text := probe_text(found.pod, c))]
    which = (
        f"container {containers[0]} fails its readiness probe"
        if len(containers) == 1
        else f"containers {', '.join(containers)} fail their readiness probes"
    )
    return which, f" ({', '.join(probes)})" if probes else ""


def lost_next_step(
    pods: list[Body],
    node: str,
    *,
    kind: str,
    name: str,
    when: str = "",
    taint: str | None = None,
) -> str:
    """What Kubernetes does next with the pods one workload (`kind` `name`: a Deployment, a
    StatefulSet, a DaemonSet; "" for none) has on a node that went. `when`: how soon the
    eviction comes, for a reader of now (", in about 3 min"); a status says no time.
    `taint`: the node's, where its state is known (UNREACHABLE_TAINT for a kubelet that
    stopped reporting, NOT_READY_TAINT for one that says the node is unwell); None for a
    status, which does not read nodes: both tolerations are told."""
    it, one = ("it" if len(pods) == 1 else "them"), len(pods) == 1
    if kind == "DaemonSet":
        return (
            f"DaemonSet {name}'s pod stays there until node {node} is back: no other node runs "
            "it in its place"
        )
    if all(deep_get(p, "metadata.deletionTimestamp") for p in pods):
        evicted = f"Kubernetes has evicted {it}, but no kubelet is there to stop {it}"
    else:
        evicted = _eviction(pods, it, when, taint)
    if kind == "StatefulSet":
        names = ", ".join(str(deep_get(p, "metadata.name")) for p in pods)
        are = "it is" if one else "they are"
        return (
            f"{evicted}; StatefulSet {name} does not replace {names} until {are} gone: "
            f"until node {node} is back or {are} deleted by force"
        )
    if kind:
        replacement = "a replacement" if one else "replacements"
        by = f"{kind} {name}" if name else f"its {kind}"
        return f"{evicted}, and {by} starts {replacement} on another node"
    return f"{evicted}; no controller starts {it} again"


def _eviction(pods: list[Body], it: str, when: str, taint: str | None) -> str:
    """What the pods' toleration of `taint` leaves them ("Kubernetes evicts them after their
    toleration of an unreachable node (300 s)"), or of both the node controller's taints when
    which one is not known (by the DefaultTolerationSeconds plugin both 300 s: told once)."""
    taints = [taint] if taint else [UNREACHABLE_TAINT, NOT_READY_TAINT]
    seconds = {t: eviction_toleration(pods[0], t) for t in taints}
    their = plural(len(pods), "its", "their")
    if len(set(seconds.values())) == 1:
        limit, that = seconds[taints[0]], _NODE_THAT[taint] if taint else _EITHER
        if limit is None:
            return f"Kubernetes leaves {it} there (a toleration of {that} for ever)"
        return f"Kubernetes evicts {it} after {their} toleration of {that} ({int(limit)} s){when}"
    each = ", ".join(
        f"{'for ever' if limit is None else f'{int(limit)} s'} if {_STATE[t]}"
        for t, limit in seconds.items()
    )
    return f"Kubernetes evicts {it} after {their} toleration of the node's state ({each}){when}"


def lost_message(pods: list[Body], *, workload: Body | None = None, noun: str = "pod") -> str:
    """The Degraded message for `pods` on nodes whose Ready is not True (lost_pods, not
    empty): how many, on which node, e.g. which, what Kubernetes does next for the first
    one's node, what to check. A status does not read nodes: which of the two it is (a
    kubelet silent, or one that says why) is the Diagnosis's to tell. `workload`: what makes
    the pods, if known (a ReplicaSet's Deployment). No durations: the status is written
    again only when the pods change."""
    first = pods[0]
    node = str(deep_get(first, "spec.nodeName"))
    nodes = sorted({str(deep_get(p, "spec.nodeName")) for p in pods})
    where = f"node {node}" if len(nodes) == 1 else f"nodes {', '.join(nodes)}"
    owner = controlling_ref(deep_get(first, "metadata.ownerReferences")) or {}
    kind, name = str(owner.get("kind", "")), str(owner.get("name", ""))
    if kind == "ReplicaSet":
        kind, name = "Deployment", str(deep_get(workload, "metadata.name", ""))
    on_node = [
        p
        for p in pods
        if deep_get(p, "spec.nodeName") == node
        and (controlling_ref(deep_get(p, "metadata.ownerReferences")) or {}).get("uid")
        == owner.get("uid")
    ]
    step = lost_next_step(on_node, node, kind=kind, name=name)
    return (
        f"{count(len(pods), noun)} not ready on {where}, whose Ready condition is not True "
        f"(its kubelet stopped reporting, or reports the node unwell), e.g. "
        f"{first['metadata']['name']}: {step}. "
        f"Check the node: kubectl describe node {node}"
    )


def failing_message(failing: list[Failing], *, noun: str = "pod") -> str:
    """The Degraded message for pods whose readiness probe keeps failing (Unready.failing,
    not empty), with where to read why: the probe's answer is only in the pod's Events."""
    first = failing[0]
    which, asks = failing_words(first)
    name = str(deep_get(first.pod, "metadata.name"))
    namespace = str(deep_get(first.pod, "metadata.namespace", ""))
    return (
        f"{which[0].upper()}{which[1:]}{asks}: {count(len(failing), noun)} running but not "
        f"ready, e.g. {name}. Its Events say why: kubectl -n {namespace} describe pod {name}"
    )
