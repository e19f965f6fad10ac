"""Findings about a CR's pods and what makes them: images that cannot be pulled, crash
loops, pods no node takes or that never become ready, refused creates, volumes; pods on a
node that stopped reporting are lost_node.py's (pure)."""

from __future__ import annotations

import re

from controllers.base import Body
from controllers.conditions import find_condition
from controllers.fields import controlling_ref, deep_get
from controllers.pods import (
    CRASHING,
    PULL_FAILURES,
    START_FAILURES,
    crashing,
    exit_words,
    last_exit,
    pod_claims,
    unschedulable,
)
from controllers.refusals import current_refusal, event_message, event_time, refusal_advice
from controllers.unready import failing_words, probe_text, unready
from controllers.wording import count, plural
from opsboard.diagnosis import nodes
from opsboard.diagnosis.lost_node import lost_node_findings
from opsboard.diagnosis.memory import out_of_memory_advice
from opsboard.diagnosis.observed import (
    RANK_PODS,
    RANK_PODS_REFUSED,
    RANK_VOLUME,
    Finding,
    LogOf,
    Observed,
    Section,
    ago,
    in_namespace,
    name_of,
    of_kind,
    on_nodes,
)
from opsboard.diagnosis.placement import kept_off, matches_no_node

# The scheduler's message counts the nodes it excluded by reason: "0/3 nodes are available:
# 1 Insufficient example.com/accel, 2 node(s) didn't match Pod's node affinity/selector."
_INSUFFICIENT = re.compile(r"(?:(\d+) )?Insufficient ([\w./-]+?)\.?(?:[,\s]|$)")


def _controller_uid(obj: Body) -> str:
    ref = controlling_ref(deep_get(obj, "metadata.ownerReferences"))
    return str(ref.get("uid", "")) if ref else ""


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
    by_image: dict[str, list[tuple[Body, str, str]]] = {}
    for pod, status in _waiting(pods, PULL_FAILURES):
        container = str(status.get("name"))
        image = _spec_image(pod, container, str(status.get("image", "")))
        reason = str(deep_get(status, "state.waiting.reason"))
        by_image.setdefault(image, []).append((pod, reason, container))
    found = []
    for image, stuck in by_image.items():
        pod, reason, container = stuck[0]
        change = next((c for c in observed.image_changes if c.image == image), None)
        set_by = (
            f" The image was set by change #{change.entry_id} of the audit "
            f"({change.username}, {ago(change.at, observed.now)} ago)."
            if change
            else ""
        )
        field = _image_field(observed, container, image)
        where = f"Set {field} to an image that exists" if field else "Set an image that exists"
        todo = (
            f"{where}, or revert change #{change.entry_id}."
            if change
            else f"{where} (check the name and tag), or give the pods a pull secret."
        )
        found.append(
            Finding(
                RANK_PODS,
                "ImagePullBackOff",
                f"{count(len(stuck), 'pod')} cannot pull image {image} ({reason}), "
                f"e.g. {name_of(pod)}.{set_by}",
                todo,
                subject=f"Pod {name_of(pod)}",
                see=Section.HISTORY if change else None,
            )
        )
    return found


def _image_field(observed: Observed, container: str, image: str) -> str | None:
    """The CR's field that sets `container`'s image, if it is where `image` comes from."""
    path = observed.fields.image_of(container)
    return path if path and deep_get(observed.cr, path) == image else None


# What the kubelet says when a container's configuration refers to what is not there, and
# when runAsNonRoot meets an image whose user is root (kubelet's kuberuntime, v1.28).
_MISSING_REF = re.compile(r'^(secret|configmap) "([^"]+)" not found')
_ROOT_IMAGE = "runAsNonRoot and image will run as root"


def _start_findings(pods: list[Body]) -> list[Finding]:
    """Containers the kubelet cannot create or start (pods.START_FAILURES), one finding per
    reason, with what it said and what to change."""
    by_reason: dict[str, list[tuple[Body, Body]]] = {}
    for pod, status in _waiting(pods, START_FAILURES):
        by_reason.setdefault(str(deep_get(status, "state.waiting.reason")), []).append(
            (pod, status)
        )
    found = []
    for reason, stuck in by_reason.items():
        pod, status = stuck[0]
        said = str(deep_get(status, "state.waiting.message") or "")
        container = str(status.get("name"))
        found.append(
            Finding(
                RANK_PODS,
                reason,
                f"{count(len(stuck), 'pod')} cannot start container {container} ({reason}), "
                f"e.g. {name_of(pod)}{f': {said}' if said else '.'}",
                _start_todo(reason, said, pod),
                subject=f"Pod {name_of(pod)}",
            )
        )
    return found


def _start_todo(reason: str, said: str, pod: Body) -> str:
    namespace = deep_get(pod, "metadata.namespace")
    if missing := _MISSING_REF.match(said):
        kind, name = ("Secret" if missing[1] == "secret" else "ConfigMap"), missing[2]
        return (
            f"Create the {kind} {name} in namespace {namespace} (the pods refer to it), or "
            "remove the reference; the kubelet starts them once it is there."
        )
    if _ROOT_IMAGE in said:
        return (
            "The pods ask for runAsNonRoot and the image runs as root: use an image that runs "
            "as a non-root user, or give the pods a non-root runAsUser (a policy or webhook "
            "may have added runAsNonRoot)."
        )
    if reason == "ErrImageNeverPull":
        return "The pods' imagePullPolicy is Never and the image is not on the node: load it there."
    return (
        "The container runtime cannot create or start it: the kubelet's message says why (a "
        "command the image does not have, a mount it refuses). "
        f"kubectl describe pod -n {namespace} {name_of(pod)} shows its Events."
    )


def _crash_findings(observed: Observed, pods: list[Body]) -> list[Finding]:
    # Back from a back-off for a moment, still in the loop: as the CR's PodsCrashing says.
    crashes = _waiting(pods, CRASHING) or crashing(pods, now=observed.now)
    if not crashes:
        return []
    pod, status = crashes[0]
    last = last_exit(status)
    exit_text = f" ({exit_words(last)})" if last else ""
    container = str(status.get("name"))
    namespace = deep_get(pod, "metadata.namespace", "")
    logs = f"kubectl logs -n {namespace} {name_of(pod)} -c {container} --previous"
    todo = f"Read its logs: {logs}"
    if last.get("reason") == "OOMKilled":
        todo = f"{out_of_memory_advice(observed, pod, container)} Its logs: {logs}"
    return [
        Finding(
            RANK_PODS,
            "CrashLoopBackOff",
            f"CrashLoopBackOff: container {container} of {count(len(crashes), 'pod')} keeps "
            f"crashing, e.g. {name_of(pod)}, {status.get('restartCount', 0)} restarts{exit_text}.",
            todo,
            subject=f"Pod {name_of(pod)}",
            log=LogOf(name_of(pod), container, previous=True),
        )
    ]


def _unready_findings(observed: Observed, pods: list[Body]) -> list[Finding]:
    """Pods that run but never become ready: a failing readiness probe. Its answer ("HTTP
    probe failed with statuscode: 503") is only in the pod's Events, which the mirror does
    not hold (the watcher would pay for every pod's at a cold start): the advice says where
    to read it."""
    # The rule the CR's ReadinessFailing condition follows, with the same grace.
    stuck = unready(pods, now=observed.now, grace=observed.unready_grace).failing
    if not stuck:
        return []
    pod, containers, since = stuck[0].pod, stuck[0].containers, stuck[0].since
    name, namespace = name_of(pod), deep_get(pod, "metadata.namespace", "")
    probes = [text for c in containers if (text := probe_text(pod, c))]
    which, asks = failing_words(stuck[0])
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
            f"{ago(since, observed.now)}, e.g. {name}: {which}{asks}.",
            f"Read why the probe fails in the pod's Events (kubectl -n {namespace} describe "
            f"pod {name}), then check what {probe} asks of container {first} and why it does "
            f"not answer (kubectl -n {namespace} logs {name} -c {first}).",
            subject=f"Pod {name}",
            see=Section.TREE,
            log=LogOf(name, first),
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


def _lower(observed: Observed, pod: Body, short: list[str]) -> str:
    """How to ask for less of the `short` resources, in the CR's own fields: its cpu and
    memory in spec.resources, a Ptemplate's device in spec.deviceCount (it has no size)."""
    containers = deep_get(pod, "spec.containers", []) or []
    if not all("/" in r for r in short) and (field := _resources_field(observed, containers)):
        return f"Lower {field}.requests (what each pod requests)"
    if observed.fields.requests:
        return f"Lower {observed.fields.requests} (what each pod requests)"
    if size := _size_field(observed, containers):
        return f"Lower what each pod requests (or the CR's {size})"
    return "Lower what each pod requests"


def _short_of(observed: Observed, pod: Body, message: str) -> tuple[str, str] | None:
    """(what, todo) when nodes the pod may run on were excluded for lack of a resource:
    the cause to name, whatever else excluded the other nodes."""
    short: dict[str, int] = {}
    for needed, resource in _INSUFFICIENT.findall(message):
        short[resource] = max(short.get(resource, 0), int(needed or 0))
    if not short:
        return None
    names = ", ".join(short)
    asks = [f"{asked} {r}" for r in short if (asked := _requested(pod, r))]
    short_on = max(short.values())
    where = f"the {short_on} node(s) it may run on" if short_on else "the nodes it may run on"
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
    offered, none = _offered(observed, pod, list(short)) if extended else ("", False)
    if offered:
        what += f" ({offered})"
    if none:
        more = f"run the device plugin that registers {names} on the nodes it may run on"
    return what, f"{_lower(observed, pod, list(short))}, or {more}."


def _offered(observed: Observed, pod: Body, resources: list[str]) -> tuple[str, bool]:
    """What the nodes the pod may run on can allocate of the `resources` it lacks, as the
    mirrored Nodes say ("rig-node-1 can allocate 2 example.com/accel"; "" without the Nodes
    or with none selected), and whether none offers any of them at all."""
    if observed.nodes is None:
        return "", False
    said, none = [], True
    for resource in resources:
        offers = nodes.allocatable(observed.nodes, pod, resource)
        if not offers:
            return "", False
        if all(amount == "0" for amount in offers.values()):
            said.append(f"none of {nodes.listed(list(offers))} offers any {resource}")
        else:
            said += [f"{name} can allocate {amount} {resource}" for name, amount in offers.items()]
            none = False
    return "; ".join(said), none


def _unschedulable_findings(observed: Observed, pods: list[Body]) -> list[Finding]:
    stuck = unschedulable(pods)
    if not stuck:
        return []
    pod, message = stuck[0]
    selector_text, _ = _selector_texts(pod)
    if short := _short_of(observed, pod, message):
        what, todo = short
    elif selector_text and matches_no_node(message):
        what = f"no node matches the node selector {selector_text}"
        todo = f"Label a node to match ({selector_text}) or change {_selector_field(observed)}."
    elif kept := kept_off(message, pod, observed.nodes):
        what, todo = kept
    else:
        what = "the scheduler can place them nowhere"
        todo = "Read the scheduler's message: add nodes, or relax the pods' constraints."
    return [
        Finding(
            RANK_PODS,
            "Unschedulable",
            f"Pending: {count(len(stuck), 'pod')} unschedulable, {what}, e.g. {name_of(pod)}: "
            f"{message}",
            on_nodes(observed, todo),
            subject=f"Pod {name_of(pod)}",
        )
    ]


def _mounting(pvc: Body, pods: list[Body]) -> list[Body]:
    namespace = deep_get(pvc, "metadata.namespace")
    return [
        pod
        for pod in pods
        if deep_get(pod, "metadata.namespace") == namespace and name_of(pvc) in pod_claims(pod)
    ]


def _remount_todo(pvc: Body, pods: list[Body]) -> str:
    """Restart the pods that mount the claim, named, with the command that does it."""
    why = "the file system grows when it is mounted again"
    mounting = _mounting(pvc, pods)
    if not mounting:
        return f"Restart the pod that mounts it: {why}."
    names = [name_of(pod) for pod in mounting]
    owners = [controlling_ref(deep_get(pod, "metadata.ownerReferences")) or {} for pod in mounting]
    sets = {owner.get("name") for owner in owners if owner.get("kind") == "StatefulSet"}
    kubectl = f"kubectl{in_namespace(pvc)}"
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


def volume_findings(objects: list[Body]) -> list[Finding]:
    pods = of_kind(objects, "Pod")
    found = []
    for pvc in of_kind(objects, "PersistentVolumeClaim"):
        name, phase = name_of(pvc), deep_get(pvc, "status.phase", "")
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
                    f"(kubectl describe pvc{in_namespace(pvc)} {name}).",
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
        for workload in of_kind(observed.objects, kind)
        if (failure := _replica_failure(workload))
    ]
    if failing:
        workload, failure = failing[0]
        message = str(failure.get("message") or "")
        found.append(_refused(observed, workload, f"({failure.get('reason')})", message))
    for workload in [
        *of_kind(observed.objects, "StatefulSet"),
        *of_kind(observed.objects, "DaemonSet"),
    ]:
        if observed.now is None:
            continue
        uid = deep_get(workload, "metadata.uid")
        pods = [p for p in of_kind(observed.objects, "Pod") if _controller_uid(p) == uid]
        # The rule the operators' status follows (a BookStore's DB): controllers.refusals.
        event = current_refusal(workload, observed.refusals, pods, now=observed.now)
        if event is None:
            continue
        message = event_message(event)
        last = ago(event_time(event), observed.now)
        found.append(_refused(observed, workload, f"(FailedCreate, last {last} ago)", message))
    return found


def _refused(observed: Observed, workload: Body, how: str, message: str) -> Finding:
    kind, name = workload.get("kind"), name_of(workload)
    containers = deep_get(workload, "spec.template.spec.containers", []) or []
    return Finding(
        RANK_PODS_REFUSED,
        "ReplicaFailure" if kind in ("ReplicaSet", "Deployment") else "FailedCreate",
        f"{kind} {name} cannot create its pods: the API server refuses them {how}: {message}",
        refusal_advice(
            str(deep_get(workload, "metadata.namespace", "")),
            message,
            observed.fields.requests or _size_field(observed, containers),
            resources=_resources_field(observed, containers),
            storage=observed.fields.storage,
        ),
        subject=f"{kind} {name}",
    )


def _size_field(observed: Observed, containers: list[Body]) -> str | None:
    """The CR's field that sets how many of these pods run: a BookStore's database has its
    own (spec.bookDB.replicas), the rest the CR's size."""
    return _field_of(observed.fields.replicas, containers) or observed.fields.size


def _resources_field(observed: Observed, containers: list[Body]) -> str | None:
    """The CR's field that sets the cpu and memory of these containers, if it has one."""
    return _field_of(observed.fields.resources, containers)


def _field_of(paths: tuple[tuple[str, str], ...], containers: list[Body]) -> str | None:
    """The CR's field `paths` (container, field) gives the first of `containers` it names."""
    by_container = dict(paths)
    return next((f for c in containers if (f := by_container.get(str(c.get("name"))))), None)


def _selector_field(observed: Observed) -> str:
    """The CR's field that selects its pods' nodes, by name where the CR has one."""
    path = observed.fields.node_selector
    return f"the CR's node selector, {path}" if path else "the CR's node selector"


def _daemonset_findings(observed: Observed) -> list[Finding]:
    """A DaemonSet its controller has counted that wants no pod: no node is selected, or
    each one that is has a taint its pods do not tolerate. The mirrored Nodes tell which;
    without them both are said. Pods it placed before may still run (a taint added since)."""
    found = []
    for daemonset in of_kind(observed.objects, "DaemonSet"):
        counted = int(deep_get(daemonset, "status.observedGeneration", 0) or 0) >= int(
            deep_get(daemonset, "metadata.generation", 1) or 1
        )
        if not counted or deep_get(daemonset, "status.desiredNumberScheduled") != 0:
            continue
        template = deep_get(daemonset, "spec.template") or {}
        what, todo = _selected_none(observed, template) or _selected_none_unknown(
            observed, template
        )
        name = name_of(daemonset)
        # A NoSchedule taint added under its pods leaves them running: its controller counts
        # them misscheduled, and places none where one goes.
        left = int(deep_get(daemonset, "status.numberMisscheduled", 0) or 0)
        head = (
            f"selects no node now: {what} (0 nodes selected); {count(left, 'pod')} it placed "
            f"before still {plural(left, 'runs', 'run')}, and none would replace one that goes."
            if left
            else f"runs no pod: {what} (0 nodes selected)."
        )
        found.append(
            Finding(
                RANK_PODS,
                "NoMatchingNodes",
                f"DaemonSet {name} {head}",
                on_nodes(observed, todo),
                subject=f"DaemonSet {name}",
            )
        )
    return found


def _selector_texts(pod: Body) -> tuple[str, str]:
    """A pod's (or a pod template's) node selector as a label selector ("a=b,c=d") and as
    kubectl label's arguments ("a=b c=d")."""
    pairs = [f"{k}={v}" for k, v in sorted((deep_get(pod, "spec.nodeSelector") or {}).items())]
    return ",".join(pairs), " ".join(pairs)


def _selected_none(observed: Observed, template: Body) -> tuple[str, str] | None:
    """(what, todo) from the mirrored Nodes; None without them, or when a node would take
    the pods now (the controller's count is older than the mirror)."""
    if observed.nodes is None:
        return None
    text, labels = _selector_texts(template)
    if not observed.nodes:
        return "the cluster has no node", "Add nodes to the cluster."
    off = nodes.keeping_off(observed.nodes, template, daemon=True)
    if not off.candidates:
        return (
            f"no node has the labels {text} ({count(len(observed.nodes), 'node')} in all)",
            f"Label the nodes that should run it (kubectl label node NODE {labels}), or change "
            f"{_selector_field(observed)}.",
        )
    tainted = {name for names in off.tainted.values() for name in names}
    if set(off.candidates) - tainted:
        return None
    which = (
        f"each node its selector {text} picks ({nodes.listed(off.candidates)})"
        if text
        else f"each node ({nodes.listed(off.candidates)})"
    )
    taints = "; ".join(f"{taint} on {nodes.listed(names)}" for taint, names in off.tainted.items())
    steps = "; ".join(
        nodes.remedy(taint, off.keys[taint], names, observed.nodes)
        for taint, names in off.tainted.items()
    )
    other = f"; or pick other nodes with {_selector_field(observed)}" if text else ""
    return (
        f"{which} has a taint its pods do not tolerate: {taints}",
        f"On the nodes that should run it: {steps}{other}.",
    )


def _selected_none_unknown(observed: Observed, template: Body) -> tuple[str, str]:
    """(what, todo) without the Nodes: either cause may be the one."""
    text, labels = _selector_texts(template)
    tainted = "has a taint its pods do not tolerate"
    what = (
        f"no node matches its node selector {text}, or each one that does {tainted}"
        if text
        else f"there is no node, or each one {tainted}"
    )
    label = (
        f"Label the nodes that should run it (kubectl label node NODE {labels}), or change "
        f"{_selector_field(observed)}. If nodes have {'them' if ' ' in labels else 'it'} "
        f"(kubectl get nodes -l {text}), "
        if text
        else "On the nodes that should run it, "
    )
    return what, (
        f"{label}remove the taint that keeps its pods off them (kubectl describe node NODE "
        "shows its taints)."
    )


def pod_findings(observed: Observed, pods: list[Body]) -> list[Finding]:
    """What keeps the CR's pods from running and ready (`pods`: the live ones it owns),
    most specific first: refused creates, images, containers the kubelet cannot start, crash
    loops, no node, readiness, a node that stopped reporting, and a DaemonSet no node is
    selected for."""
    return [
        *_refused_pods_findings(observed),
        *_pull_findings(observed, pods),
        *_start_findings(pods),
        *_crash_findings(observed, pods),
        *_unschedulable_findings(observed, pods),
        *_unready_findings(observed, pods),
        *lost_node_findings(observed),
        *_daemonset_findings(observed),
    ]
