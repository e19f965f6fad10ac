"""How long a pod may be "starting" before its CR is Degraded, and when a CR's status would
read otherwise with no event to tell: a pod's grace ends (pure).

Two graces keep a pod "starting" for a while before its CR is Degraded: one waiting for a
node (controllers.scheduling) and one whose readiness probe fails (controllers.unready).
And a container back from a crash loop stays "crashing" for a while (controllers.pods).
Nothing in the cluster changes when any of them ends, so no event wakes the CR: the
reconcile asks to run again by then (controllers.apply.finish's `due`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from controllers.base import Body
from controllers.conditions import parse_time
from controllers.pods import crash_settles
from controllers.scheduling import UNSCHEDULABLE_GRACE_SECONDS, unscheduled
from controllers.unready import UNREADY_GRACE_SECONDS, unready

# Their keys in a Context's settings: the engine passes OPSBOARD_UNSCHEDULABLE_GRACE_SECONDS
# and OPSBOARD_UNREADY_GRACE_SECONDS.
UNSCHEDULABLE_SETTING = "unschedulable_grace"
UNREADY_SETTING = "unready_grace"


@dataclass(frozen=True)
class Graces:
    """Seconds a pod may wait for a node, and run unready, before its CR is Degraded."""

    unschedulable: float = UNSCHEDULABLE_GRACE_SECONDS
    unready: float = UNREADY_GRACE_SECONDS


DEFAULT_GRACES = Graces()


def graces_from(settings: Mapping[str, Any]) -> Graces:
    """The graces a run's settings give, else the defaults."""
    return Graces(
        unschedulable=float(settings.get(UNSCHEDULABLE_SETTING, UNSCHEDULABLE_GRACE_SECONDS)),
        unready=float(settings.get(UNREADY_SETTING, UNREADY_GRACE_SECONDS)),
    )


def grace_ends(pods: list[Body], *, now: str, graces: Graces) -> float | None:
    """Seconds until the first of `pods`' graces ends at `now` (TIME_FORMAT), None if no pod
    is within one."""
    at = parse_time(now)
    ends = (
        unscheduled(pods, now=now, grace=graces.unschedulable).recheck,
        unready(pods, now=at, grace=graces.unready).recheck,
        crash_settles(pods, now=at),
    )
    return min((s for s in ends if s is not None), default=None)
