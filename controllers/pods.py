"""Facts about pods, and the one list of reasons a pod is stuck: it will not start
without someone's help (an image that cannot be pulled, a crash loop, no node for it)."""

from __future__ import annotations

from controllers.base import Body
from controllers.conditions import condition_of
from controllers.fields import deep_get

PULL_FAILURES = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName")
CRASHING = ("CrashLoopBackOff",)
STUCK_REASONS = frozenset(PULL_FAILURES + CRASHING)  # container waiting reasons


def pod_is_ready(pod: Body) -> bool:
    return condition_of(pod, "Ready").get("status") == "True"


def pod_is_stuck(pod: Body) -> bool:
    """Not ready, and a container waits for an image it cannot pull or in a crash loop: it
    will not get ready without someone's help, so it counts as neither ready nor starting."""
    return not pod_is_ready(pod) and bool(waiting([pod], CRASHING + PULL_FAILURES))


def pod_images(pod: Body) -> set[str]:
    return {c.get("image", "") for c in deep_get(pod, "spec.containers", [])}


def pod_claims(pod: Body) -> list[str]:
    """The PersistentVolumeClaims the pod mounts, by name."""
    return [
        claim
        for volume in deep_get(pod, "spec.volumes", []) or []
        if (claim := deep_get(volume, "persistentVolumeClaim.claimName"))
    ]


def spec_image(pod: Body, status: Body) -> str:
    """The image as the spec names it (a node reports it normalised: docker.io/library/...)."""
    for container in deep_get(pod, "spec.containers", []):
        if container.get("name") == status.get("name"):
            return str(container.get("image"))
    return str(status.get("image", ""))


def last_exit(status: Body) -> Body:
    """A container status's last termination (its reason and exitCode), {} if none."""
    return deep_get(status, "lastState.terminated") or {}


def exit_words(last: Body) -> str:
    """A last exit as the status and the diagnosis say it: "last exit: OOMKilled, code 137"."""
    return f"last exit: {last.get('reason', 'Error')}, code {last.get('exitCode')}"


def waiting(pods: list[Body], reasons: tuple[str, ...]) -> list[tuple[Body, Body]]:
    """(pod, containerStatus) pairs whose container waits for one of `reasons`."""
    return [
        (pod, status)
        for pod in pods
        for status in deep_get(pod, "status.containerStatuses", [])
        if deep_get(status, "state.waiting.reason") in reasons
    ]


def unschedulable(pods: list[Body]) -> list[tuple[Body, str]]:
    """(pod, the scheduler's message) for each pod the scheduler could place nowhere."""
    found = []
    for pod in pods:
        scheduled = condition_of(pod, "PodScheduled")
        if scheduled.get("status") == "False" and scheduled.get("reason") == "Unschedulable":
            found.append((pod, str(scheduled.get("message") or "")))
    return found
