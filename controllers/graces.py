"""When a CR's status would read otherwise with no event to tell (pure): a pod's grace ends.

Two graces keep a pod "starting" for a while before its CR is Degraded: one waiting for a
node (controllers.scheduling) and one whose readiness probe fails (controllers.unready).
Nothing in the cluster changes when either ends, so no event wakes the CR: the reconcile
asks to run again by then (controllers.apply.finish's `due`).
"""

from __future__ import annotations

from controllers.base import Body
from controllers.conditions import parse_time
from controllers.scheduling import unscheduled
from controllers.unready import unready


def grace_ends(pods: list[Body], *, now: str, grace: float) -> float | None:
    """Seconds until the first of `pods`' graces ends at `now` (TIME_FORMAT), None if no pod
    is within one. `grace`: the unschedulable grace the run's settings give."""
    ends = (
        unscheduled(pods, now=now, grace=grace).recheck,
        unready(pods, now=parse_time(now)).recheck,
    )
    return min((s for s in ends if s is not None), default=None)
