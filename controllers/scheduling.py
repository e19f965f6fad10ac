"""Pods that wait for a node: stuck only once they have waited past a grace (pure).

A pod no node can take for a moment is routine: a rolling update on full nodes leaves its
surge pod Pending until an old pod goes, and a cluster autoscaler adds a node for it. As
the Deployment controller gives a rollout progressDeadlineSeconds before it calls it
failed, a CR is Degraded for unschedulable pods only once one has waited longer than
UNSCHEDULABLE_GRACE_SECONDS (since its PodScheduled=False lastTransitionTime, which the
scheduler keeps while it retries); until then the CR is progressing, waiting for them.
"""

from __future__ import annotations

from dataclasses import dataclass

from controllers.base import Body
from controllers.conditions import condition_of, parse_time
from controllers.pods import unschedulable
from controllers.wording import count, plural

# Long enough for an old pod to go in a rolling update and the scheduler to retry (it
# does at once when a pod is deleted); short enough that a pod no node will ever take
# reads as Degraded within a minute. Clusters that add nodes on demand may want more:
# OPSBOARD_UNSCHEDULABLE_GRACE_SECONDS (controllers.graces).
UNSCHEDULABLE_GRACE_SECONDS = 30.0


@dataclass(frozen=True)
class Unscheduled:
    """The pods the scheduler could place nowhere, as (pod, the scheduler's message)."""

    stuck: list[tuple[Body, str]]  # past the grace (or since an unknown time): Degraded
    waiting: list[tuple[Body, str]]  # within it: the CR is still progressing
    recheck: float | None  # seconds until the first waiting pod's grace ends, if any

    def waiting_note(self, noun: str = "pod") -> str:
        """What the Progressing message adds while pods wait: "; 1 pod waits to be
        scheduled, e.g. web-x: 0/3 nodes are available: 3 Insufficient cpu."."""
        if not self.waiting:
            return ""
        pod, message = self.waiting[0]
        n = len(self.waiting)
        return (
            f"; {count(n, noun)} {plural(n, 'waits', 'wait')} to be scheduled, "
            f"e.g. {pod['metadata']['name']}: {message}"
        )


def unscheduled(pods: list[Body], *, now: str, grace: float) -> Unscheduled:
    """`pods`' unschedulable ones, split by the grace at `now` (TIME_FORMAT)."""
    stuck, waiting, left = [], [], []
    at = parse_time(now)
    for pod, message in unschedulable(pods):
        since = parse_time(condition_of(pod, "PodScheduled").get("lastTransitionTime"))
        waited = (at - since).total_seconds() if at and since else None
        if waited is None or waited > grace:
            stuck.append((pod, message))
        else:
            waiting.append((pod, message))
            # Times have whole seconds: one more makes sure the grace is over by then.
            left.append(grace - waited + 1.0)
    return Unscheduled(stuck, waiting, min(left, default=None))
