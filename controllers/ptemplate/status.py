"""The Ptemplate CR's status, told from its DaemonSet, its consumer pods and its Module (pure)."""

from __future__ import annotations

from controllers.base import Body
from controllers.conditions import conditions_from, parse_time
from controllers.fields import deep_get
from controllers.graces import DEFAULT_GRACES, Graces
from controllers.pods import Stuck, pod_is_ready, stuck_pods
from controllers.problems import Problem
from controllers.ptemplate.desired import (
    RESOURCES_PATH,
    module_name,
    spec_device_count,
    spec_device_resource,
    spec_image,
    spec_node_selector,
)
from controllers.scheduling import Unscheduled, unscheduled
from controllers.unready import Unready, unready
from controllers.wording import count, plural
from controllers.workload import (
    crashing_problem,
    pull_problem,
    refused_problem,
    start_problem,
    starting_note,
    unready_problem,
    unschedulable_problem,
)

NO_MATCHING_NODES = "NoMatchingNodes"
NO_DEVICE_CAPACITY = "NoDeviceCapacity"


def _selector_text(cr: Body) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(spec_node_selector(cr).items())) or "(none)"


def _degraded(
    cr: Body,
    desired: int | None,
    misscheduled: int,
    pending: Unscheduled,
    refused: Problem | None,
    blocked: Stuck,
    settled: Unready,
) -> tuple[str, str] | None:
    if desired == 0:
        # Its controller also leaves out nodes with a taint the pods do not tolerate; one
        # added under running pods leaves them there, counted misscheduled.
        left = (
            f"; {count(misscheduled, 'consumer pod')} placed before still "
            f"{plural(misscheduled, 'runs', 'run')}, and none would replace one that goes"
            if misscheduled
            else ""
        )
        return NO_MATCHING_NODES, (
            f"No node matches the node selector {_selector_text(cr)}, or each one that does "
            f"has a taint the consumer pods do not tolerate{left}"
        )
    if stuck := pending.stuck:  # past the grace, as for every workload (scheduling)
        pod, message = stuck[0]
        resource = spec_device_resource(cr)
        if f"Insufficient {resource}" in message:
            return NO_DEVICE_CAPACITY, (
                f"{count(len(stuck), 'consumer pod')} pending: no selected node has "
                f"{spec_device_count(cr)} free {resource} (is the device plugin running?), "
                f"e.g. {pod['metadata']['name']}: {message}"
            )
        return unschedulable_problem(stuck, noun="consumer pod")
    if refused:  # a quota or admission refuses the DaemonSet's pods: none is created
        return refused
    if blocked.pulls:
        return pull_problem(blocked.pulls)
    if blocked.cannot_start:
        return start_problem(blocked.cannot_start)
    if blocked.crashes:
        return crashing_problem(blocked.crashes)
    # Running, not ready, not starting: on a lost node, or a readiness probe that fails.
    return unready_problem(settled, workload=None, noun="consumer pod")


def compute_status(
    cr: Body,
    *,
    daemonset: Body | None,
    module: Body | None,
    pods: list[Body],
    now: str,
    problem: Problem | None = None,
    events: list[Body] | None = None,
    graces: Graces = DEFAULT_GRACES,
) -> Body:
    """nodes, desired/ready counts, the Module's presence and the three conditions.

    The counts are the DaemonSet's, once its controller has seen its current generation.
    Before that, a new DaemonSet's desired count is unknown (a 0 means nothing yet); a
    changed one's is the count of its previous generation, and none of its pods is updated
    yet: a spec change does not make a healthy Ptemplate unavailable for a moment.
    Degraded when the consumer pods cannot be placed or start, when the API server
    refuses them, which the DaemonSet tells only in the FailedCreate `events` about it, or
    when they are not ready and not starting either (controllers.unready): on a node that
    stopped reporting, or a readiness probe that fails past its grace.
    """
    generation = int(deep_get(cr, "metadata.generation", 0))
    live = sorted(
        (p for p in pods if not deep_get(p, "metadata.deletionTimestamp")),
        key=lambda p: p["metadata"]["name"],
    )
    seen = int(deep_get(daemonset, "status.observedGeneration", 0)) if daemonset else 0
    counted = daemonset is not None and seen >= int(deep_get(daemonset, "metadata.generation", 1))
    desired = int(deep_get(daemonset, "status.desiredNumberScheduled", 0)) if seen else None
    updated = int(deep_get(daemonset, "status.updatedNumberScheduled", 0)) if counted else 0
    ready = sum(1 for p in live if pod_is_ready(p))
    image = spec_image(cr)
    current = [p for p in live if image in {c.get("image") for c in p["spec"]["containers"]}]

    # A previous generation's 0 may be what a new node selector fixes: not yet "no node".
    pending = unscheduled(live, now=now, grace=graces.unschedulable)
    refused = refused_problem(
        daemonset, events=events or [], pods=live, now=now, resources_field=RESOURCES_PATH
    )
    # A DaemonSet's pod evicted from a lost node is replaced: none holds its place.
    at = parse_time(now)
    settled = unready(live, now=at, grace=graces.unready)
    stuck = stuck_pods(live, now=at)
    not_starting = len(settled.lost) + len(settled.failing) + stuck.count
    misscheduled = int(deep_get(daemonset, "status.numberMisscheduled", 0) or 0) if counted else 0
    degraded = problem or _degraded(
        cr, desired if counted else None, misscheduled, pending, refused, stuck, settled
    )
    consumers, runs = plural(desired or 0, "consumer pod"), plural(desired or 0, "runs", "run")
    if desired is None:
        progressing: tuple[str, str] | None = ("Creating", "The consumer DaemonSet is starting")
    elif not counted or len(current) < len(live) or updated < desired:
        # Updated as the DaemonSet counts it: a change of deviceCount keeps the image.
        done = min(updated, len(current))
        progressing = ("RollingOut", f"{done}/{desired} {consumers} updated")
    elif ready + not_starting < desired:
        told = f"{ready}/{desired} {consumers} ready"
        progressing = ("PodsStarting", told + starting_note(desired - ready, not_starting))
    else:
        progressing = None
    if progressing is not None and (note := pending.waiting_note("consumer pod")):
        progressing = (progressing[0], progressing[1] + note)
    available = desired is not None and desired > 0 and ready >= desired
    shown = "?" if desired is None else desired
    verdicts = (
        (
            "Available",
            available,
            ("PodsReady" if available else "PodsNotReady", f"{ready}/{shown} {consumers} ready"),
        ),
        (
            "Progressing",
            progressing is not None,
            progressing or ("RolloutComplete", f"{shown} {consumers} {runs} {image}"),
        ),
        (
            "Degraded",
            degraded is not None,
            degraded or ("AsExpected", "Consumer pods run as expected"),
        ),
    )
    conditions = conditions_from(cr, verdicts, observed_generation=generation, now=now)
    return {
        "nodes": [p["metadata"]["name"] for p in live],
        "desiredNumberScheduled": desired or 0,
        "numberReady": ready,
        "moduleName": module_name(cr),
        "modulePresent": module is not None and not deep_get(module, "metadata.deletionTimestamp"),
        "observedGeneration": generation,
        "conditions": conditions,
    }
