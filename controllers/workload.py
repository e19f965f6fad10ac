"""The status of a workload CR: one Deployment of `size` pods running one image (pure)."""

from __future__ import annotations

from collections.abc import Mapping

from controllers.base import Body
from controllers.conditions import conditions_from
from controllers.fields import deep_get
from controllers.ownership import selector_string
from controllers.pods import CRASHING, PULL_FAILURES, pod_images, pod_is_ready, spec_image, waiting
from controllers.problems import Problem


def workload_status(
    cr: Body,
    *,
    pods: list[Body],
    size: int,
    image: str,
    labels: Mapping[str, str],
    now: str,
    problem: Problem | None = None,
) -> Body:
    """The CR's status, told from its pods: nodes, readyReplicas, selector and conditions.

    Available: the ready pods reach the size. Progressing: a scale or rollout is under way.
    Degraded: pods cannot start (the image cannot be pulled, a container crashes), or a
    `problem` found before anything was written (an invalid spec, a child in the way).
    """
    generation = int(deep_get(cr, "metadata.generation", 0))
    live = sorted(
        (p for p in pods if not deep_get(p, "metadata.deletionTimestamp")),
        key=lambda p: p["metadata"]["name"],
    )
    ready = sum(1 for p in live if pod_is_ready(p))
    current = [p for p in live if image in pod_images(p)]
    outdated = len(live) - len(current)

    progressing: tuple[str, str] | None = None
    if outdated:
        progressing = ("RollingOut", f"{len(current)}/{size} pods run {image}")
    elif len(live) < size:
        progressing = ("ScalingUp", f"{len(live)}/{size} pods created")
    elif len(live) > size:
        progressing = ("ScalingDown", f"{len(live)} pods for size {size}")
    elif ready < size:
        progressing = ("PodsStarting", f"{ready}/{size} pods ready")

    degraded: tuple[str, str] | None = None
    if problem:
        degraded = problem
    elif pulls := waiting(live, PULL_FAILURES):
        # One message for ErrImagePull and ImagePullBackOff: a node alternates between the two,
        # and the condition must not flap with it.
        pod, status = pulls[0]
        degraded = (
            "ImagePullFailed",
            f"Image {spec_image(pod, status)} cannot be pulled: {len(pulls)} pod(s) wait "
            f"for it, e.g. {pod['metadata']['name']}",
        )
    elif crashes := waiting(live, CRASHING):
        pod, status = crashes[0]
        degraded = (
            "PodsCrashing",
            f"Container {status.get('name')} keeps crashing: {len(crashes)} pod(s) "
            f"in CrashLoopBackOff, e.g. {pod['metadata']['name']}",
        )

    available = ("PodsReady" if ready >= size else "PodsNotReady", f"{ready}/{size} pods ready")
    verdicts = (
        ("Available", ready >= size, available),
        (
            "Progressing",
            progressing is not None,
            progressing or ("RolloutComplete", f"{size} pods run {image}"),
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
