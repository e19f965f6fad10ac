"""The status of a workload CR: one Deployment of `size` pods running one image (pure)."""

from __future__ import annotations

from collections.abc import Mapping

from controllers.base import Body
from controllers.conditions import conditions_from, find_condition, parse_time
from controllers.fields import deep_get
from controllers.graces import DEFAULT_GRACES, Graces
from controllers.ownership import selector_string
from controllers.pods import (
    exit_words,
    last_exit,
    pod_images,
    pod_is_ready,
    spec_image,
    stuck_pods,
)
from controllers.problems import PODS_REFUSED, Problem
from controllers.refusals import REASON, current_refusal, event_message, refusal_advice
from controllers.scheduling import unscheduled
from controllers.unready import Unready, failing_message, lost_message, unready
from controllers.wording import count, plural

UNSCHEDULABLE = "PodsUnschedulable"
NODE_LOST = "NodeLost"
READINESS_FAILING = "ReadinessFailing"


def unschedulable_problem(stuck: list[tuple[Body, str]], *, noun: str = "pod") -> Problem | None:
    """Degraded for pods no node can take (`stuck`: scheduling.unscheduled's, past the
    grace), in the scheduler's words: the cluster will not get there on its own (a node
    must be added or freed, or the pods ask for less)."""
    if not stuck:
        return None
    pod, message = stuck[0]
    return UNSCHEDULABLE, (
        f"{count(len(stuck), noun)} cannot be scheduled, e.g. {pod['metadata']['name']}: {message}"
    )


def crashing_problem(crashes: list[tuple[Body, Body]]) -> Problem:
    """Degraded for containers in CrashLoopBackOff (`crashes`: pods.crashing's, not empty),
    with their last exit where it says more than "Error": OOMKilled is a memory limit."""
    pod, status = crashes[0]
    last = last_exit(status)
    exit_text = f" ({exit_words(last)})" if last.get("reason") not in (None, "Error") else ""
    return "PodsCrashing", (
        f"Container {status.get('name')} keeps crashing{exit_text}: "
        f"{count(len(crashes), 'pod')} in CrashLoopBackOff, e.g. {pod['metadata']['name']}"
    )


def pull_problem(pulls: list[tuple[Body, Body]]) -> Problem:
    """Degraded for containers whose image cannot be pulled (`pulls`: pods.stuck_pods's,
    not empty). One message for ErrImagePull and ImagePullBackOff: a node alternates between
    the two, and the condition must not flap with it."""
    pod, status = pulls[0]
    return "ImagePullFailed", (
        f"Image {spec_image(pod, status)} cannot be pulled: {count(len(pulls), 'pod')} "
        f"{plural(len(pulls), 'waits', 'wait')} for it, e.g. {pod['metadata']['name']}"
    )


def start_problem(failures: list[tuple[Body, Body]]) -> Problem:
    """Degraded for containers the kubelet cannot create or start (`failures`: waiting with
    one of pods.START_FAILURES, not empty), with the kubelet's own words."""
    pod, status = failures[0]
    reason = deep_get(status, "state.waiting.reason")
    said = deep_get(status, "state.waiting.message")
    return "ContainerCannotStart", (
        f"Container {status.get('name')} cannot start ({reason}{f': {said}' if said else ''}): "
        f"{count(len(failures), 'pod')} {plural(len(failures), 'waits', 'wait')}, "
        f"e.g. {pod['metadata']['name']}"
    )


def unready_problem(
    found: Unready, *, workload: Body | None = None, noun: str = "pod"
) -> Problem | None:
    """Degraded for pods that are not ready and are not starting (controllers.unready): on a
    node that stopped reporting (Kubernetes evicts them after their toleration), or whose
    readiness probe keeps failing (nothing changes by itself). The first says more: a node."""
    if found.lost:
        return NODE_LOST, lost_message(found.lost, workload=workload, noun=noun)
    if found.failing:
        return READINESS_FAILING, failing_message(found.failing, noun=noun)
    return None


def refused_problem(
    workload: Body | None,
    *,
    events: list[Body],
    pods: list[Body],
    now: str,
    size_field: str | None = None,
    resources_field: str | None = None,
    storage_field: str | None = None,
) -> Problem | None:
    """Degraded when the API server refuses the workload's pods (a ResourceQuota, a
    LimitRange, admission). A Deployment says so in its ReplicaFailure condition
    (FailedCreate), carried over from its ReplicaSet, until a create succeeds; a
    StatefulSet only in FailedCreate Events about it (`events`: controllers.refusals).
    The message says what to do; `size_field`: the CR's field that sets how many pods,
    `resources_field` the one that sets their cpu and memory, `storage_field` the size of
    their claims (a StatefulSet's)."""
    if workload is None:
        return None
    failure = find_condition(deep_get(workload, "status.conditions"), "ReplicaFailure")
    if failure is not None and failure.get("status") == "True":
        reason, message = str(failure.get("reason")), str(failure.get("message") or "")
    elif at := parse_time(now):
        if (event := current_refusal(workload, events, pods, now=at)) is None:
            return None
        reason, message = REASON, event_message(event)
    else:
        return None
    namespace = str(deep_get(workload, "metadata.namespace", ""))
    return PODS_REFUSED, (
        f"{workload.get('kind', 'Deployment')} {workload['metadata']['name']} cannot create "
        f"its pods ({reason}): {message.rstrip('.')}. "
        + refusal_advice(
            namespace, message, size_field, resources=resources_field, storage=storage_field
        )
    )


def starting_note(not_ready: int, not_starting: int) -> str:
    """What "k/n pods ready" adds when some of the `not_ready` pods are not starting either
    (Degraded says why): how many still are, ", 1 starting"; nothing when all of them are."""
    return f", {not_ready - not_starting} starting" if not_starting else ""


def workload_status(
    cr: Body,
    *,
    pods: list[Body],
    size: int,
    image: str,
    labels: Mapping[str, str],
    now: str,
    problem: Problem | None = None,
    workload: Body | None = None,
    events: list[Body] | None = None,
    size_field: str | None = None,
    resources_field: str | None = None,
    storage_field: str | None = None,
    graces: Graces = DEFAULT_GRACES,
) -> Body:
    """The CR's status, told from its pods: nodes, readyReplicas, selector and conditions.

    Available: the ready pods reach the size. Progressing: a scale or rollout is under way,
    or pods are starting. Degraded: pods cannot start (the image cannot be pulled, a
    container crashes, no node has taken them for `graces.unschedulable` seconds:
    scheduling), the API server refuses them (their Deployment, `workload`, says so, or
    `events` about their StatefulSet do), pods are not ready and not starting either (on a
    node that stopped reporting, or a readiness probe that fails past `graces.unready`:
    controllers.unready), or a `problem` found before anything was written (an invalid
    spec, a child in the way).
    Pods that cannot start come first: they keep the CR from its size at all.
    `size_field`, `resources_field` and `storage_field`: the CR's fields a refusal's advice
    names.
    """
    generation = int(deep_get(cr, "metadata.generation", 0))
    pods = sorted(pods, key=lambda p: p["metadata"]["name"])  # messages name the first
    live = [p for p in pods if not deep_get(p, "metadata.deletionTimestamp")]
    ready = sum(1 for p in live if pod_is_ready(p))
    current = [p for p in live if image in pod_images(p)]
    outdated = len(live) - len(current)
    # Not ready and not starting either: nothing will change by itself (controllers.unready),
    # nor for a pod stuck on its image or in a crash loop (Degraded says which). A
    # StatefulSet's pod evicted from a lost node still holds its place: it is not replaced.
    at = parse_time(now)
    settled = unready(pods, now=at, grace=graces.unready)
    held = [p for p in settled.lost if deep_get(p, "metadata.deletionTimestamp")]
    stuck = stuck_pods(live, now=at)
    not_starting = len(settled.lost) - len(held) + len(settled.failing) + stuck.count

    # Worded by the size: "0/1 pod ready", "1/3 pods ready", "1 pod runs nginx".
    pods_of_size, runs = plural(size, "pod"), plural(size, "runs", "run")
    progressing: tuple[str, str] | None = None
    if outdated:
        progressing = ("RollingOut", f"{len(current)}/{size} {pods_of_size} {runs} {image}")
    elif len(live) + len(held) < size:
        progressing = ("ScalingUp", f"{len(live)}/{size} {pods_of_size} created")
    elif len(live) > size:
        progressing = ("ScalingDown", f"{count(len(live), 'pod')} for size {size}")
    elif ready + not_starting < len(live):
        told = f"{ready}/{size} {pods_of_size} ready"
        progressing = ("PodsStarting", told + starting_note(len(live) - ready, not_starting))
    # A starting pod keeps Progressing True: one waiting for a node says so there.
    pending = unscheduled(live, now=now, grace=graces.unschedulable)
    if progressing is not None and (note := pending.waiting_note()):
        progressing = (progressing[0], progressing[1] + note)

    degraded: tuple[str, str] | None = None
    if problem:
        degraded = problem
    elif stuck.pulls:
        degraded = pull_problem(stuck.pulls)
    elif stuck.cannot_start:
        degraded = start_problem(stuck.cannot_start)
    elif stuck.crashes:
        degraded = crashing_problem(stuck.crashes)
    else:
        # Pending past the grace: for good until someone frees a node, not "Progressing".
        degraded = (
            unschedulable_problem(pending.stuck)
            or refused_problem(
                workload,
                events=events or [],
                pods=live,
                now=now,
                size_field=size_field,
                resources_field=resources_field,
                storage_field=storage_field,
            )
            or unready_problem(settled, workload=workload)
        )

    # Never "5/4 ready": just after a scale-down (or in a surge) the pods on their way out
    # are still ready, and the Deployment has not marked them terminating yet.
    surplus = f" ({count(ready - size, 'more pod')} being removed)" if ready > size else ""
    available = (
        "PodsReady" if ready >= size else "PodsNotReady",
        f"{min(ready, size)}/{size} {pods_of_size} ready{surplus}",
    )
    verdicts = (
        ("Available", ready >= size, available),
        (
            "Progressing",
            progressing is not None,
            progressing or ("RolloutComplete", f"{size} {pods_of_size} {runs} {image}"),
        ),
        ("Degraded", degraded is not None, degraded or ("AsExpected", "Pods start as expected")),
    )
    conditions = conditions_from(cr, verdicts, observed_generation=generation, now=now)
    return {
        "nodes": [p["metadata"]["name"] for p in live],
        "readyReplicas": ready,
        "selector": selector_string(labels),
        "observedGeneration": generation,
        "conditions": conditions,
    }
