"""Facts about pods, and the one list of reasons a pod is stuck: it will not start
without someone's help (an image that cannot be pulled, a crash loop, no node for it)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from controllers.base import Body
from controllers.conditions import condition_of, parse_time
from controllers.fields import deep_get

PULL_FAILURES = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName")
CRASHING = ("CrashLoopBackOff",)
# The kubelet cannot create or start the container, and tries again to the same end until
# someone changes the pod or what it refers to: a Secret or ConfigMap that is missing,
# runAsNonRoot with an image that runs as root, a command the image does not have.
START_FAILURES = (
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "ErrImageNeverPull",
    "PreStartHookError",
    "PostStartHookError",
)
STUCK_REASONS = frozenset(PULL_FAILURES + CRASHING + START_FAILURES)  # container waiting reasons
# Between two of a loop's back-offs its container exits, or runs (even ready) for a moment:
# one that has restarted twice or more counts as crashing until it has run this long, so a
# CR in a crash loop does not flap between Degraded and not (a Warning each time) at each
# restart. A single restart (a node's, a liveness probe's) is not a loop.
CRASH_SETTLE_SECONDS = 60.0


def pod_is_ready(pod: Body) -> bool:
    return condition_of(pod, "Ready").get("status") == "True"


@dataclass(frozen=True)
class Stuck:
    """(pod, containerStatus) pairs of the containers that will not get ready without
    someone's help, by why: waiting for an image that cannot be pulled, waiting for a start
    the kubelet cannot make, in a crash loop (`crashing`)."""

    pulls: list[tuple[Body, Body]]
    cannot_start: list[tuple[Body, Body]]
    crashes: list[tuple[Body, Body]]

    @property
    def count(self) -> int:
        """How many pods they keep from ready: those count as neither ready nor starting."""
        found = [*self.pulls, *self.cannot_start, *self.crashes]
        return len({pod["metadata"]["name"] for pod, _ in found if not pod_is_ready(pod)})


def stuck_pods(live: list[Body], *, now: datetime | None) -> Stuck:
    """The containers of `live` pods stuck at `now`, by why."""
    return Stuck(
        waiting(live, PULL_FAILURES), waiting(live, START_FAILURES), crashing(live, now=now)
    )


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


def crashing(pods: list[Body], *, now: datetime | None) -> list[tuple[Body, Body]]:
    """(pod, containerStatus) pairs of containers in a crash loop at `now`: waiting in
    CrashLoopBackOff, or, restarted twice or more, exited again or running again for less
    than CRASH_SETTLE_SECONDS (with `now` unknown, only the first)."""
    return [
        (pod, status)
        for pod in pods
        for status in deep_get(pod, "status.containerStatuses", []) or []
        if deep_get(status, "state.waiting.reason") in CRASHING
        or (_settles_in(status, now) or 0.0) > 0
    ]


def crash_settles(pods: list[Body], *, now: datetime | None) -> float | None:
    """Seconds until the first of `pods`' containers back from a crash loop has run long
    enough to count as out of it (CRASH_SETTLE_SECONDS), None if none is: no event tells."""
    left = [
        s
        for pod in pods
        for status in deep_get(pod, "status.containerStatuses", []) or []
        if deep_get(status, "state.running") and (s := _settles_in(status, now)) is not None
    ]
    # Times have whole seconds: one more makes sure the window is over by then.
    return min((s + 1.0 for s in left if s > 0), default=None)


def _settles_in(status: Body, now: datetime | None) -> float | None:
    """Seconds until a container restarted twice or more is out of its loop: its current
    run CRASH_SETTLE_SECONDS old (0 once it is, the window's length while it has exited);
    None for one restarted less often, or whose run's start is unknown."""
    if now is None or int(status.get("restartCount") or 0) < 2:
        return None
    if deep_get(status, "state.terminated"):
        return CRASH_SETTLE_SECONDS
    started = parse_time(deep_get(status, "state.running.startedAt"))
    if started is None:
        return None
    return max(0.0, CRASH_SETTLE_SECONDS - (now - started).total_seconds())


def unschedulable(pods: list[Body]) -> list[tuple[Body, str]]:
    """(pod, the scheduler's message) for each pod the scheduler could place nowhere."""
    found = []
    for pod in pods:
        scheduled = condition_of(pod, "PodScheduled")
        if scheduled.get("status") == "False" and scheduled.get("reason") == "Unschedulable":
            found.append((pod, str(scheduled.get("message") or "")))
    return found
