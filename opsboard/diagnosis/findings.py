"""Why a CR is not converging: findings computed from what the mirror and the run log hold.

Pure: plain data in (`Observed`), an ordered list of `Finding`s out, most likely cause
first. No database, no Redis, no API server: `gather.py` fills `Observed` from those.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from controllers.base import Body
from controllers.conditions import find_condition, parse_time
from controllers.fields import controlling_ref, deep_get
from controllers.pods import CRASHING, PULL_FAILURES, STUCK_REASONS, pod_claims
from controllers.refusals import (
    current_refusal,
    event_message,
    event_time,
    refusal_advice,
)
from controllers.wording import count
from opsboard.diagnosis.errors import (
    IMMUTABLE,
    OPERATOR_CLUSTER_ROLE,
    ClassifiedError,
    classify_error,
)

# Lower ranks are more likely causes and are shown first.
RANK_ENGINE_DOWN = 5
RANK_REFUSED = 10  # a 403 or 422: nothing converges until someone changes something
RANK_FOREIGN_CHILD = 12
RANK_UNREACHABLE = 15
RANK_PODS_REFUSED = 18  # the API server refuses a workload's new pods: none can follow
RANK_PODS = 20
RANK_VOLUME = 25
RANK_ROLLOUT = 30
RANK_MISSING_CHILD = 35
RANK_FINALIZER = 40
RANK_ERROR = 45
RANK_BACKOFF = 50
RANK_QUEUE = 55
RANK_CONDITION = 60
RANK_STALE = 70

# The scheduler's message counts the nodes it excluded by reason: "0/3 nodes are available:
# 1 Insufficient example.com/accel, 2 node(s) didn't match Pod's node affinity/selector."
_NODES = re.compile(r"0/(\d+) nodes are available")
_INSUFFICIENT = re.compile(r"(?:(\d+) )?Insufficient ([\w./-]+?)\.?(?:[,\s]|$)")
# How long after the mirror saw a CR change a stale status with nothing queued yet reads as
# "being picked up": the watcher writes the mirror, then queues the key.
PICKUP_GRACE_SECONDS = 10.0
# How long a workload's new generation may wait for the cluster's controller before the
# diagnosis says it is not acting: a kube-controller-manager at its default client limit (20
# requests a second) takes tens of seconds to reach the last of a thousand new Deployments.
CONTROLLER_GRACE_SECONDS = 60.0
# How long a running container may stay unready before the diagnosis names it: a readiness
# probe passes after its initialDelaySeconds and a period or two, and a blip of a failing
# probe (a slow request) is over in a few periods.
UNREADY_GRACE_SECONDS = 30.0
_CONTROLLED = {"Deployment": "deployment", "StatefulSet": "statefulset", "DaemonSet": "daemonset"}
_NODE_MISMATCH = re.compile(r"(?:(\d+) )?node\(s\) didn't match Pod's node affinity/selector")


class Section(StrEnum):
    """A part of the CR's own page that a finding's advice refers to (the value is its id
    there). The advice does not say where it is: each page that shows it words the pointer
    itself ("below" on the CR's page, a link elsewhere)."""

    HISTORY = "history"  # the change history, whose entries each have a reviewed revert
    TREE = "tree"  # the owner tree, where each pod says whether it is ready

    @property
    def heading(self) -> str:
        """Its name in a sentence: "change history"."""
        return {Section.HISTORY: "change history", Section.TREE: "owner tree"}[self]


@dataclass(frozen=True)
class Finding:
    rank: int
    code: str  # a stable name for tests and filters: "ImagePullBackOff", "Forbidden", ...
    what: str  # one line: what is wrong
    todo: str  # one line: what to do, without saying where on a page
    subject: str = ""  # the object that causes it: "Pod web-1", "Deployment web"
    see: Section | None = None  # where on the CR's page the advice's object is


@dataclass(frozen=True)
class ImageChange:
    """An applied audit entry that set an image path of the CR."""

    entry_id: int
    image: str
    username: str
    at: datetime


@dataclass(frozen=True)
class LastRun:
    outcome: str  # ReconcileRun.Outcome value
    error: str
    started_at: datetime


@dataclass(frozen=True)
class EngineState:
    redis_up: bool = True
    watcher_leader: str = ""  # identity of the leading watcher, "" if none
    last_watcher: str = ""  # the freshest watcher heartbeat known, leading or not
    last_watcher_at: datetime | None = None
    standbys: int = 0  # live watchers not leading
    lease_error: str = ""  # why a standby could not take the Lease, if one said
    workers: tuple[str, ...] = ()
    failures: int = 0  # consecutive failures of this key (the backoff step)
    next_retry_at: datetime | None = None  # when the delayed queue sends the key again
    permanent: bool = False  # a user-fixable error: waits for the object to change
    queued_since: datetime | None = None  # the key waits in the queue since then
    running_since: datetime | None = None
    stale_after: float = 60.0  # OPSBOARD_QUEUE_STALE_SECONDS
    temporary_backoff_max: float = 60.0  # OPSBOARD_BACKOFF_TEMPORARY_MAX


@dataclass(frozen=True)
class Observed:
    cr: Body
    objects: list[Body] = field(default_factory=list)  # the owner tree and the claims it mounts
    missing: list[tuple[str, str]] = field(default_factory=list)  # (kind, name) expected
    foreign: list[Body] = field(default_factory=list)  # expected children another owner controls
    unowned: list[Body] = field(default_factory=list)  # expected children no one controls (yet)
    # The Services holding a NodePort the last run was refused, by port: "Service ns/name".
    port_users: dict[int, str] = field(default_factory=dict)
    changed_at: datetime | None = None  # when the mirror last saw the CR change
    # The CR's fields that set how many pods run and what each requests (Controller's).
    size_path: str | None = None
    requests_path: str | None = None
    image_changes: list[ImageChange] = field(default_factory=list)  # newest first
    last_run: LastRun | None = None
    engine: EngineState = field(default_factory=EngineState)
    # FailedCreate Events about the StatefulSets and DaemonSets short of pods (short_of_pods)
    refusals: list[Body] = field(default_factory=list)
    running_controllers: tuple[str, ...] = ()  # finalizer domains opsboard's controllers own
    operator_role: str = OPERATOR_CLUSTER_ROLE  # the ClusterRole a 403 says to change
    # When the mirror last saw each object of `objects` change, by uid.
    objects_changed_at: dict[str, datetime] = field(default_factory=dict)
    now: datetime | None = None


def _name(body: Body) -> str:
    return str(deep_get(body, "metadata.name", ""))


def _ago(then: datetime | None, now: datetime | None) -> str:
    if then is None or now is None:
        return "unknown"
    seconds = max(0, int((now - then).total_seconds()))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h"


def _controller_uid(obj: Body) -> str:
    ref = controlling_ref(deep_get(obj, "metadata.ownerReferences"))
    return str(ref.get("uid", "")) if ref else ""


def _of_kind(objects: list[Body], kind: str) -> list[Body]:
    return [
        o
        for o in objects
        if o.get("kind") == kind and not deep_get(o, "metadata.deletionTimestamp")
    ]


def _spec_image(pod: Body, container: str, reported: str) -> str:
    """The image as the pod's spec names it (a node reports it normalised)."""
    for spec in deep_get(pod, "spec.containers", []) + deep_get(pod, "spec.initContainers", []):
        if spec.get("name") == container:
            return str(spec.get("image", reported))
    return reported


def _waiting(pods: list[Body], reasons: tuple[str, ...]) -> list[tuple[Body, Body]]:
    statuses = ("status.initContainerStatuses", "status.containerStatuses")
    return [
        (pod, status)
        for pod in pods
        for path in statuses
        for status in deep_get(pod, path, []) or []
        if deep_get(status, "state.waiting.reason") in reasons
    ]


def _pull_findings(observed: Observed, pods: list[Body]) -> list[Finding]:
    by_image: dict[str, list[tuple[Body, str]]] = {}
    for pod, status in _waiting(pods, PULL_FAILURES):
        image = _spec_image(pod, str(status.get("name")), str(status.get("image", "")))
        reason = str(deep_get(status, "state.waiting.reason"))
        by_image.setdefault(image, []).append((pod, reason))
    found = []
    for image, stuck in by_image.items():
        pod, reason = stuck[0]
        change = next((c for c in observed.image_changes if c.image == image), None)
        set_by = (
            f" The image was set by change #{change.entry_id} of the audit "
            f"({change.username}, {_ago(change.at, observed.now)} ago)."
            if change
            else ""
        )
        todo = (
            f"Set an image that exists, or revert change #{change.entry_id}."
            if change
            else "Set an image that exists (check the name and tag), or give the pods a pull secret."
        )
        found.append(
            Finding(
                RANK_PODS,
                "ImagePullBackOff",
                f"{count(len(stuck), 'pod')} cannot pull image {image} ({reason}), "
                f"e.g. {_name(pod)}.{set_by}",
                todo,
                subject=f"Pod {_name(pod)}",
                see=Section.HISTORY if change else None,
            )
        )
    return found


def _crash_findings(pods: list[Body]) -> list[Finding]:
    crashes = _waiting(pods, CRASHING)
    if not crashes:
        return []
    pod, status = crashes[0]
    last = deep_get(status, "lastState.terminated") or {}
    exit_text = (
        f" (last exit: {last.get('reason', 'Error')}, code {last.get('exitCode')})" if last else ""
    )
    container = status.get("name")
    namespace = deep_get(pod, "metadata.namespace", "")
    return [
        Finding(
            RANK_PODS,
            "CrashLoopBackOff",
            f"CrashLoopBackOff: container {container} of {count(len(crashes), 'pod')} keeps "
            f"crashing, e.g. {_name(pod)}, {status.get('restartCount', 0)} restarts{exit_text}.",
            f"Read its logs: kubectl logs -n {namespace} {_name(pod)} -c {container} --previous",
            subject=f"Pod {_name(pod)}",
        )
    ]


def _unready_containers(pod: Body, now: datetime) -> tuple[list[str], datetime] | None:
    """The containers of a running pod that run and have started but are not ready (their
    readiness probe fails), and since when they are so: the later of their start and the
    pod's Ready turning False. None while a pod starts, stops or is stuck another way (a
    crash loop, an image pull: other rules say those), or within UNREADY_GRACE_SECONDS."""
    ready = find_condition(deep_get(pod, "status.conditions"), "Ready") or {}
    if (
        deep_get(pod, "status.phase") != "Running"
        or ready.get("status") != "False"
        or ready.get("reason") != "ContainersNotReady"
        or _waiting([pod], tuple(STUCK_REASONS))
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
    since = max(known)
    if (now - since).total_seconds() <= UNREADY_GRACE_SECONDS:
        return None
    return [str(s.get("name")) for s in running], since


def _probe_text(pod: Body, container: str) -> str:
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


def _unready_findings(observed: Observed, pods: list[Body]) -> list[Finding]:
    """Pods that run but never become ready: a failing readiness probe. Its answer ("HTTP
    probe failed with statuscode: 503") is only in the pod's Events, which the mirror does
    not hold (the watcher would pay for every pod's at a cold start): the advice says where
    to read it."""
    if observed.now is None:
        return []
    stuck = [(pod, found) for pod in pods if (found := _unready_containers(pod, observed.now))]
    if not stuck:
        return []
    pod, (containers, since) = stuck[0]
    name, namespace = _name(pod), deep_get(pod, "metadata.namespace", "")
    probes = [text for c in containers if (text := _probe_text(pod, c))]
    which = (
        f"container {containers[0]} fails its readiness probe"
        if len(containers) == 1
        else f"containers {', '.join(containers)} fail their readiness probes"
    )
    asks = f" ({', '.join(probes)})" if probes else ""
    first = containers[0]
    probe = (
        f"its readiness probe {probes[0]}"
        if len(probes) == 1 and len(containers) == 1
        else "its readiness probe (kubectl -n "
        f'{namespace} get pod {name} -o jsonpath=\'{{.spec.containers[?(@.name=="{first}")]'
        ".readinessProbe}')"
    )
    return [
        Finding(
            RANK_PODS,
            "NotReady",
            f"Not ready: {count(len(stuck), 'pod')} running but not ready for "
            f"{_ago(since, observed.now)}, e.g. {name}: {which}{asks}.",
            f"Read why the probe fails in the pod's Events (kubectl -n {namespace} describe "
            f"pod {name}), then check what {probe} asks of container {first} and why it does "
            f"not answer (kubectl -n {namespace} logs {name} -c {first}).",
            subject=f"Pod {name}",
            see=Section.TREE,
        )
    ]


def _requested(pod: Body, resource: str) -> str:
    """How much of `resource` the pod's containers ask for, as their spec says it ("" if
    none says); an extended resource may set only its limit, which is then the request."""
    asked = []
    for container in deep_get(pod, "spec.containers", []) or []:
        resources = container.get("resources") or {}
        value = (resources.get("requests") or {}).get(resource) or (
            resources.get("limits") or {}
        ).get(resource)
        if value:
            asked.append(str(value))
    return "+".join(asked)


def _lower(observed: Observed) -> str:
    """How to ask for less, in the CR's own fields: a Ptemplate's pods each request its
    spec.deviceCount and it has no size; a Memcached's requests are the operator's."""
    if observed.requests_path:
        return f"Lower {observed.requests_path} (what each pod requests)"
    if observed.size_path:
        return f"Lower what each pod requests (or the CR's {observed.size_path})"
    return "Lower what each pod requests"


def _short_of(pod: Body, message: str, lower: str) -> tuple[str, str] | None:
    """(what, todo) when nodes the pod may run on were excluded for lack of a resource:
    the cause to name, whatever else excluded the other nodes."""
    short: dict[str, int] = {}
    for needed, resource in _INSUFFICIENT.findall(message):
        short[resource] = max(short.get(resource, 0), int(needed or 0))
    if not short:
        return None
    names = ", ".join(short)
    asks = [f"{asked} {r}" for r in short if (asked := _requested(pod, r))]
    nodes = max(short.values())
    where = f"the {nodes} node(s) it may run on" if nodes else "the nodes it may run on"
    what = (
        f"not enough {names}: each pod requests {', '.join(asks)}, more than {where} have free"
        if asks
        else f"not enough {names} free on {where}"
    )
    extended = all("/" in r for r in short)
    more = (
        f"add {names} to the nodes it may run on (is its device plugin running there?)"
        if extended
        else f"free {names} on the nodes, or add nodes"
    )
    return what, f"{lower}, or {more}."


def _matches_no_node(message: str) -> bool:
    """Every node was excluded by the node selector or affinity, none for another reason."""
    mismatch, nodes = _NODE_MISMATCH.search(message), _NODES.search(message)
    if mismatch is None:
        return False
    if mismatch[1] is None or nodes is None:  # no counts: judge by the reason alone
        return True
    return mismatch[1] == nodes[1]


def _unschedulable_findings(observed: Observed, pods: list[Body]) -> list[Finding]:
    stuck = []
    for pod in pods:
        scheduled = find_condition(deep_get(pod, "status.conditions"), "PodScheduled") or {}
        if scheduled.get("status") == "False" and scheduled.get("reason") == "Unschedulable":
            stuck.append((pod, str(scheduled.get("message") or "")))
    if not stuck:
        return []
    pod, message = stuck[0]
    selector = deep_get(pod, "spec.nodeSelector") or {}
    selector_text = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    if short := _short_of(pod, message, _lower(observed)):
        what, todo = short
    elif selector and _matches_no_node(message):
        what = f"no node matches the node selector {selector_text}"
        todo = f"Label a node to match ({selector_text}) or change the CR's node selector."
    else:
        what = "the scheduler can place them nowhere"
        todo = "Read the scheduler's message: add nodes, or relax the pods' constraints."
    return [
        Finding(
            RANK_PODS,
            "Unschedulable",
            f"Pending: {count(len(stuck), 'pod')} unschedulable, {what}, e.g. {_name(pod)}: "
            f"{message}",
            todo,
            subject=f"Pod {_name(pod)}",
        )
    ]


def _mounting(pvc: Body, pods: list[Body]) -> list[Body]:
    namespace = deep_get(pvc, "metadata.namespace")
    return [
        pod
        for pod in pods
        if deep_get(pod, "metadata.namespace") == namespace and _name(pvc) in pod_claims(pod)
    ]


def _remount_todo(pvc: Body, pods: list[Body]) -> str:
    """Restart the pods that mount the claim, named, with the command that does it."""
    why = "the file system grows when it is mounted again"
    mounting = _mounting(pvc, pods)
    if not mounting:
        return f"Restart the pod that mounts it: {why}."
    names = [_name(pod) for pod in mounting]
    owners = [controlling_ref(deep_get(pod, "metadata.ownerReferences")) or {} for pod in mounting]
    sets = {owner.get("name") for owner in owners if owner.get("kind") == "StatefulSet"}
    kubectl = f"kubectl{_in_namespace(pvc)}"
    if len(sets) == 1 and all(owner.get("kind") == "StatefulSet" for owner in owners):
        command = f"{kubectl} rollout restart statefulset {sets.pop()}"
    elif all(owners):
        command = f"{kubectl} delete pod {' '.join(names)}"
    else:
        command = f"{kubectl} delete pod {' '.join(names)}, then create it again yourself"
    which = (
        f"pod {names[0]}, which mounts"
        if len(names) == 1
        else f"pods {', '.join(names)}, which mount"
    )
    return f"Restart {which} it: {why} ({command})."


def _volume_findings(objects: list[Body]) -> list[Finding]:
    pods = _of_kind(objects, "Pod")
    found = []
    for pvc in _of_kind(objects, "PersistentVolumeClaim"):
        name, phase = _name(pvc), deep_get(pvc, "status.phase", "")
        conditions = deep_get(pvc, "status.conditions", []) or []
        resize = next(
            (c for c in conditions if c.get("type") in ("Resizing", "FileSystemResizePending")),
            None,
        )
        if phase == "Pending":
            found.append(
                Finding(
                    RANK_VOLUME,
                    "ClaimPending",
                    f"PersistentVolumeClaim {name} is Pending: no volume is bound to it.",
                    "Check its StorageClass exists and can provision "
                    f"(kubectl describe pvc{_in_namespace(pvc)} {name}).",
                    subject=f"PersistentVolumeClaim {name}",
                )
            )
        elif resize is not None:
            wanted = deep_get(pvc, "spec.resources.requests.storage", "?")
            has = deep_get(pvc, "status.capacity.storage", "?")
            todo = (
                _remount_todo(pvc, pods)
                if resize.get("type") == "FileSystemResizePending"
                else "Wait for the volume's provisioner to finish the resize."
            )
            found.append(
                Finding(
                    RANK_VOLUME,
                    "ClaimResizing",
                    f"PersistentVolumeClaim {name} waits for a resize "
                    f"({resize.get('type')}): {has} of {wanted}.",
                    todo,
                    subject=f"PersistentVolumeClaim {name}",
                )
            )
    return found


def _replica_failure(workload: Body) -> Body | None:
    failure = find_condition(deep_get(workload, "status.conditions"), "ReplicaFailure")
    return failure if failure and failure.get("status") == "True" else None


def _refused_pods_findings(observed: Observed) -> list[Finding]:
    """Workloads whose pod creates the API server refuses. A ReplicaSet tells it in its
    ReplicaFailure condition, which its Deployment carries too (the Deployment's is read
    when no ReplicaSet carries one); a StatefulSet or DaemonSet short of pods, in a recent
    FailedCreate Event. Any refusal of a pod shows so: a quota, a LimitRange, PodSecurity,
    a webhook."""
    found = []
    failing = [
        (workload, failure)
        for kind in ("ReplicaSet", "Deployment")
        for workload in _of_kind(observed.objects, kind)
        if (failure := _replica_failure(workload))
    ]
    if failing:
        workload, failure = failing[0]
        message = str(failure.get("message") or "")
        found.append(_refused(observed, workload, f"({failure.get('reason')})", message))
    for workload in [
        *_of_kind(observed.objects, "StatefulSet"),
        *_of_kind(observed.objects, "DaemonSet"),
    ]:
        if observed.now is None:
            continue
        uid = deep_get(workload, "metadata.uid")
        pods = [p for p in _of_kind(observed.objects, "Pod") if _controller_uid(p) == uid]
        # The rule the operators' status follows (a BookStore's DB): controllers.refusals.
        event = current_refusal(workload, observed.refusals, pods, now=observed.now)
        if event is None:
            continue
        message = event_message(event)
        ago = _ago(event_time(event), observed.now)
        found.append(_refused(observed, workload, f"(FailedCreate, last {ago} ago)", message))
    return found


def _refused(observed: Observed, workload: Body, how: str, message: str) -> Finding:
    kind, name = workload.get("kind"), _name(workload)
    return Finding(
        RANK_PODS_REFUSED,
        "ReplicaFailure" if kind in ("ReplicaSet", "Deployment") else "FailedCreate",
        f"{kind} {name} cannot create its pods: the API server refuses them {how}: {message}",
        refusal_advice(
            str(deep_get(workload, "metadata.namespace", "")),
            message,
            observed.requests_path or observed.size_path,
        ),
        subject=f"{kind} {name}",
    )


def _rollout_findings(objects: list[Body], *, explained: bool) -> list[Finding]:
    """`explained`: a finding above says why the new pods are not ready."""
    found = []
    for deployment in _of_kind(objects, "Deployment"):
        progressing = find_condition(deep_get(deployment, "status.conditions"), "Progressing")
        if progressing and progressing.get("reason") == "ProgressDeadlineExceeded":
            deadline = deep_get(deployment, "spec.progressDeadlineSeconds", 600)
            name, namespace = _name(deployment), deep_get(deployment, "metadata.namespace", "")
            why = (
                "Fix what keeps its new pods from becoming ready (above)"
                if explained
                else "Find why its new pods are not ready (kubectl -n "
                f"{namespace} describe deployment {name}, then its pods)"
            )
            found.append(
                Finding(
                    RANK_ROLLOUT,
                    "ProgressDeadlineExceeded",
                    f"The rollout of Deployment {name} is stuck past its progress "
                    f"deadline ({deadline} s): {progressing.get('message', '')}",
                    f"{why}, or revert the change that started the rollout.",
                    subject=f"Deployment {name}",
                )
            )
    return found


def _daemonset_findings(objects: list[Body]) -> list[Finding]:
    """A DaemonSet its controller has counted that wants no pod: no node is selected."""
    found = []
    for daemonset in _of_kind(objects, "DaemonSet"):
        counted = int(deep_get(daemonset, "status.observedGeneration", 0) or 0) >= int(
            deep_get(daemonset, "metadata.generation", 1) or 1
        )
        if not counted or deep_get(daemonset, "status.desiredNumberScheduled") != 0:
            continue
        selector = deep_get(daemonset, "spec.template.spec.nodeSelector") or {}
        text = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
        what = f"no node matches its node selector {text}" if text else "no node matches it"
        name = _name(daemonset)
        found.append(
            Finding(
                RANK_PODS,
                "NoMatchingNodes",
                f"DaemonSet {name} runs no pod: {what} (0 nodes selected).",
                f"Label the nodes that should run it (kubectl label node NODE {text or 'KEY=VALUE'}),"
                " or change the CR's node selector.",
                subject=f"DaemonSet {name}",
            )
        )
    return found


def _unobserved_findings(observed: Observed) -> list[Finding]:
    """A workload whose controller has not observed its generation, and nothing about it has
    changed for a while: the cluster's controller is not acting on it (kube-controller-manager
    down, or far behind). Nothing else would say so: its pods simply never come."""
    found = []
    for workload in observed.objects:
        controller = _CONTROLLED.get(str(workload.get("kind")))
        since = observed.objects_changed_at.get(str(deep_get(workload, "metadata.uid", "")))
        if (
            controller is None
            or since is None
            or observed.now is None
            or deep_get(workload, "metadata.deletionTimestamp")
        ):
            continue
        generation = int(deep_get(workload, "metadata.generation", 0) or 0)
        seen = int(deep_get(workload, "status.observedGeneration", 0) or 0)
        if seen >= generation or (observed.now - since).total_seconds() < CONTROLLER_GRACE_SECONDS:
            continue
        kind, name = workload["kind"], _name(workload)
        described = f"its status describes generation {seen}" if seen else "it has no status"
        found.append(
            Finding(
                RANK_PODS,
                "NotObserved",
                f"{kind} {name} is at generation {generation} and {described}: the cluster's "
                f"{controller} controller has not acted on it for {_ago(since, observed.now)}.",
                "Check the cluster's kube-controller-manager (kubectl -n kube-system get pods, "
                "or the provider's status page for a managed cluster): it is not running, or "
                f"far behind. opsboard's part is done: it wrote the {kind}.",
                subject=f"{kind} {name}",
            )
        )
    return found


def _children_findings(observed: Observed, refused: ClassifiedError | None) -> list[Finding]:
    """`refused`: the last run's error, classified (_last_error)."""
    kind = observed.cr.get("kind", "CR")
    found = []
    for child in observed.foreign:
        owner: dict[str, Any] = controlling_ref(deep_get(child, "metadata.ownerReferences")) or {}
        found.append(
            Finding(
                RANK_FOREIGN_CHILD,
                "ForeignChild",
                f"{child.get('kind')} {_name(child)} is in the way: it is controlled by "
                f"{owner.get('kind', '?')} {owner.get('name', '?')}, not by this {kind}.",
                f"Rename this {kind}, or delete that {child.get('kind')} if nothing needs it.",
                subject=f"{child.get('kind')} {_name(child)}",
            )
        )
    for child in observed.unowned:
        if refused is not None and refused.refused == (child.get("kind"), _name(child)):
            continue  # its adoption failed: the error finding says why
        found.append(
            Finding(
                RANK_MISSING_CHILD,
                "UnownedChild",
                f"{child.get('kind')} {_name(child)} exists but was not created by opsboard "
                "(it has no owner): the next reconcile adopts it, as controller-runtime does.",
                f"Nothing to do if it is meant for this {kind}; if not, delete it or rename "
                f"this {kind}.",
                subject=f"{child.get('kind')} {_name(child)}",
            )
        )
    there = {(c.get("kind"), _name(c)) for c in [*observed.foreign, *observed.unowned]}
    for child_kind, name in observed.missing:
        if (child_kind, name) in there:
            continue
        found.append(
            Finding(
                RANK_MISSING_CHILD,
                "MissingChild",
                f"{child_kind} {name} is missing.",
                "The next reconcile creates it; if it stays missing, look at the errors here.",
                subject=f"{child_kind} {name}",
            )
        )
    return found


def _in_namespace(obj: Body) -> str:
    """kubectl's namespace flag for `obj`, with its leading space ("" if cluster-scoped)."""
    namespace = deep_get(obj, "metadata.namespace", "")
    return f" -n {namespace}" if namespace else ""


def _finalizer_findings(observed: Observed) -> list[Finding]:
    blocked = [observed.cr] + [
        o for o in observed.objects if deep_get(o, "metadata.deletionTimestamp")
    ]
    found = []
    for obj in blocked:
        if not deep_get(obj, "metadata.deletionTimestamp"):
            continue
        for finalizer in deep_get(obj, "metadata.finalizers", []) or []:
            domain = finalizer.split("/", 1)[0] if "/" in finalizer else ""
            if finalizer in ("foregroundDeletion", "orphan"):
                owner = "the garbage collector, once the children are gone"
            elif domain == "kubernetes.io" or domain.endswith(".kubernetes.io"):
                owner = "the cluster's own controllers (kube-controller-manager)"
            elif domain in observed.running_controllers:
                owner = "an opsboard controller, which is running"
            else:
                owner = "a controller opsboard does not run: is it running?"
            what = (
                f"Deletion of {obj.get('kind')} {_name(obj)} waits for finalizer {finalizer} "
                f"(removed by {owner}); asked for "
                f"{deep_get(obj, 'metadata.deletionTimestamp')}."
            )
            found.append(
                Finding(
                    RANK_FINALIZER,
                    "BlockingFinalizer",
                    what,
                    "Start the controller that owns it; as a last resort remove it: kubectl "
                    f"patch{_in_namespace(obj)} {str(obj.get('kind', '')).lower()} {_name(obj)} "
                    "--type=merge "
                    '-p \'{"metadata":{"finalizers":null}}\'',
                    subject=f"{obj.get('kind')} {_name(obj)}",
                )
            )
    return found


_ERROR_RANKS = {
    "Forbidden": RANK_REFUSED,
    "Invalid": RANK_REFUSED,
    "PortTaken": RANK_REFUSED,
    "Unreachable": RANK_UNREACHABLE,
    "Conflict": RANK_QUEUE,
}


def _last_error(observed: Observed) -> ClassifiedError | None:
    run = observed.last_run
    if run is None or run.outcome not in ("error", "permanent") or not run.error:
        return None
    return classify_error(
        run.error,
        role=observed.operator_role,
        permanent=run.outcome == "permanent",
        kind=str(observed.cr.get("kind", "")),
        namespace=str(deep_get(observed.cr, "metadata.namespace", "")),
    )


def _spec_path(value: object, spec: object, path: str = "spec") -> str | None:
    """The dotted path of the CR's spec field that holds `value` (the NodePort it asks for)."""
    if spec == value:
        return path
    if isinstance(spec, dict):
        for key, inner in spec.items():
            if found := _spec_path(value, inner, f"{path}.{key}"):
                return found
    return None


def _explained(observed: Observed, error: ClassifiedError) -> ClassifiedError:
    """The error told with what the mirror knows: a refused child that opsboard did not
    create (its adoption failed), the Service that holds a NodePort and the CR's field."""
    kind = observed.cr.get("kind", "CR")
    child = f"{error.refused[0]} {error.refused[1]}"
    unowned = {(c.get("kind"), _name(c)) for c in observed.unowned}
    if error.code == "Invalid" and error.refused in unowned:
        cannot = (
            f"cannot change its {error.field}, which is immutable"
            if error.why == IMMUTABLE
            else f"cannot change its {error.field}: {error.why}"
        )
        namespace = deep_get(observed.cr, "metadata.namespace", "")
        command = f"kubectl -n {namespace} delete {error.refused[0].lower()} {error.refused[1]}"
        return replace(
            error,
            what=f"{child} already exists and was not created by opsboard (it has no owner). "
            f"opsboard adopts such a {error.refused[0]}, but {cannot}.",
            # Its deletion wakes the CR, which expects it by name (opsboard.engine.expected).
            todo=f"Delete it ({command}): opsboard then creates its own. Or rename this {kind}.",
        )
    if error.code == "PortTaken":
        user = observed.port_users.get(error.port, "another Service")
        where = _spec_path(error.port, observed.cr.get("spec"))
        return replace(
            error,
            what=f"NodePort {error.port} is already in use by {user}, so {child} cannot get it.",
            todo=f"Set another {where or 'NodePort'}, or remove it to let the cluster choose "
            f"one. Or free the port: the engine retries at least every "
            f"{_seconds(observed.engine.temporary_backoff_max)} and succeeds once it is free.",
        )
    return error


def _seconds(seconds: float) -> str:
    """'60 s', '2 min', '90 s'."""
    return f"{seconds / 60:g} min" if seconds >= 120 and seconds % 60 == 0 else f"{seconds:g} s"


def _due(at: datetime, now: datetime | None) -> str:
    """How soon `at` comes: 'in 9 s (17:00:09 UTC)', or 'now (…)' once it has passed."""
    wait = (at - now).total_seconds() if now else 0
    return f"{f'in {wait:.0f} s' if wait > 0 else 'now'} ({at:%H:%M:%S} UTC)"


def _error_findings(observed: Observed, error: ClassifiedError | None) -> list[Finding]:
    """`error`: the last run's, classified (_last_error)."""
    run, engine = observed.last_run, observed.engine
    found = []
    if run is not None and error is not None:
        error = _explained(observed, error)
        found.append(
            Finding(
                _ERROR_RANKS.get(error.code, RANK_ERROR),
                error.code,
                f"{error.what} (last run, {_ago(run.started_at, observed.now)} ago)",
                error.todo,
                subject=" ".join(error.refused) if all(error.refused) else "",
            )
        )
    if engine.failures and engine.next_retry_at is not None:
        found.append(
            Finding(
                RANK_BACKOFF,
                "Backoff",
                f"Backoff in effect: {engine.failures} failure(s) in a row; "
                f"the next retry is due {_due(engine.next_retry_at, observed.now)}.",
                "Fix the error above, then press Reconcile now instead of waiting.",
            )
        )
    return found


def _engine_findings(observed: Observed) -> list[Finding]:
    engine, now = observed.engine, observed.now
    found = []
    if not engine.redis_up:
        found.append(
            Finding(
                RANK_ENGINE_DOWN,
                "RedisDown",
                "Redis does not answer: nothing can be queued or reconciled.",
                "Check that the Redis server REDIS_URL names is running and reachable from "
                "here, and its password in REDIS_URL; the engine reconnects by itself.",
            )
        )
        return found
    if not engine.watcher_leader and engine.standbys:
        found.append(_no_leader(engine))
    elif not engine.watcher_leader:
        last = (
            f" (the last watcher, {engine.last_watcher}, was seen "
            f"{_ago(engine.last_watcher_at, now)} ago)"
            if engine.last_watcher
            else ""
        )
        found.append(
            Finding(
                RANK_ENGINE_DOWN,
                "NoWatcher",
                f"No watcher is leading: the mirror is stale and no change is noticed{last}.",
                "Start the watcher (manage.py runwatcher); a standby takes the Lease itself.",
            )
        )
    if not engine.workers:
        found.append(
            Finding(
                RANK_ENGINE_DOWN,
                "NoWorker",
                "No live worker: queued reconciles are not run.",
                "Start a Celery worker (celery -A opsboard worker) where it reaches REDIS_URL.",
            )
        )
    if engine.queued_since is not None and now is not None and engine.running_since is None:
        waited = (now - engine.queued_since).total_seconds()
        if waited > engine.stale_after:
            found.append(
                Finding(
                    RANK_QUEUE,
                    "WaitingTooLong",
                    f"This object has waited {waited:.0f} s in the queue without a run "
                    f"(more than OPSBOARD_QUEUE_STALE_SECONDS = {engine.stale_after:g}).",
                    "Check the workers: busy with others, stalled, or none consuming.",
                )
            )
    return found


def _no_leader(engine: EngineState) -> Finding:
    """Watchers run, but none holds the Lease: a leader that could not renew it gave it up
    and the standbys cannot take it, most often because the API server is unreachable."""
    why = (
        f": their last attempt failed with {engine.lease_error}"
        if engine.lease_error
        else " (the Lease is taken once its holder's term runs out)"
    )
    return Finding(
        RANK_ENGINE_DOWN,
        "NoLeader",
        f"{engine.standbys} watcher(s) running, but none can take the leader Lease{why}. "
        "Until one does, the mirror is stale and no change is noticed.",
        "Check that the watchers reach the API server: its health, the network between, and "
        "the credentials of the kubeconfig they use; a watcher leads as soon as it can.",
    )


def _condition_findings(observed: Observed) -> list[Finding]:
    degraded = find_condition(deep_get(observed.cr, "status.conditions"), "Degraded")
    if not degraded or degraded.get("status") != "True":
        return []
    return [
        Finding(
            RANK_CONDITION,
            str(degraded.get("reason") or "Degraded"),
            f"Degraded: {degraded.get('reason')}: {degraded.get('message')}",
            "See the operator's docs for this reason (docs/operators.md).",
        )
    ]


def _stale_findings(observed: Observed) -> list[Finding]:
    generation = int(deep_get(observed.cr, "metadata.generation", 0) or 0)
    seen = deep_get(observed.cr, "status.observedGeneration")
    if not isinstance(seen, int) or seen >= generation:
        return []
    if deep_get(observed.cr, "metadata.deletionTimestamp"):
        return []  # the deletion raised the generation: not a spec for a reconcile to observe
    engine, now = observed.engine, observed.now
    # Said only from the key's state in Redis: a key nothing queued (its change lost, or
    # not queued yet) must not read as "pending".
    just_changed = (
        observed.changed_at is not None
        and now is not None
        and (now - observed.changed_at).total_seconds() < PICKUP_GRACE_SECONDS
    )
    if engine.running_since:
        where, todo = " A reconcile is running.", "Wait for it to finish."
    elif engine.queued_since:
        where = " A reconcile is queued."
        todo = "Wait for the next reconcile; if it never comes, see the engine findings."
    elif engine.failures and engine.next_retry_at is not None:
        where = f" The next retry is due {_due(engine.next_retry_at, now)}."
        todo = "Fix the error above, then press Reconcile now instead of waiting."
    elif just_changed:  # before a permanent mark: the change may be the fix
        where = " The change is being picked up."
        todo = "Nothing to do: the next reconcile observes it in a moment."
    elif engine.next_retry_at is not None:  # a requeue-after
        where = f" The next reconcile is due {_due(engine.next_retry_at, now)}."
        todo = "Wait for it; if it does not run, see the engine findings."
    elif engine.permanent:
        where = " The last reconcile failed and is not retried until the object changes."
        todo = "Fix the error above, then press Reconcile now."
    else:
        where = " No reconcile is queued for it." if engine.redis_up else ""
        todo = "Press Reconcile now; if it does not run, see the engine findings."
    return [
        Finding(
            RANK_STALE,
            "StatusStale",
            f"The status describes generation {seen}; the spec is at {generation}.{where}",
            todo,
        )
    ]


def diagnose(observed: Observed) -> list[Finding]:
    """Every finding, most likely cause first. A CR's own Degraded condition is listed
    only when nothing more specific explains it."""
    pods = _of_kind(observed.objects, "Pod")
    pod_causes = [
        *_refused_pods_findings(observed),
        *_pull_findings(observed, pods),
        *_crash_findings(pods),
        *_unschedulable_findings(observed, pods),
        *_unready_findings(observed, pods),
        *_daemonset_findings(observed.objects),
        *_unobserved_findings(observed),
        *_volume_findings(observed.objects),
    ]
    last_error = _last_error(observed)  # read by two rules: classified once
    found = [
        *_engine_findings(observed),
        *_error_findings(observed, last_error),
        *_children_findings(observed, last_error),
        *pod_causes,
        *_rollout_findings(observed.objects, explained=bool(pod_causes)),
        *_finalizer_findings(observed),
        *_stale_findings(observed),
    ]
    if not any(f.rank < RANK_CONDITION for f in found):
        found.extend(_condition_findings(observed))
    return sorted(found, key=lambda f: f.rank)
