"""Holding back a status write that only reports a rollout's progress (pure).

A scale from 1 to 2 used to patch the CR's status three times: the new generation seen, the
new pod created (status.nodes gains it, still starting), the pod ready. The middle one says
nothing a user acts on and is usually overtaken within a second, so a write that differs from
the written status only in `status.nodes` and the Progressing condition's reason and message,
early in a rollout, waits: the pod turning ready writes everything in one patch, and if it
does not come, the requeue writes the progress once the wait is over. So status.nodes may lag
by up to PROGRESS_BATCH_SECONDS at the start of a rollout, and never otherwise.
"""

from __future__ import annotations

from datetime import UTC, datetime

from controllers.base import Body
from controllers.conditions import TIME_FORMAT, find_condition

PROGRESS_BATCH_SECONDS = 2.0  # lastTransitionTime has whole seconds: 2 s is 1 to 2 s of wait


def progress_wait(written: Body, wanted: Body, *, now: datetime) -> float | None:
    """Seconds to hold back writing `wanted` over the `written` status, or None: write now."""
    if not written or wanted == {k: written.get(k) for k in wanted}:
        return None
    if any(written.get(k) != v for k, v in wanted.items() if k not in ("nodes", "conditions")):
        return None  # the generation seen, readyReplicas, the selector...: at once
    before, after = written.get("conditions") or [], wanted.get("conditions") or []
    if _other_than_progressing(before) != _other_than_progressing(after):
        return None  # Available or Degraded changed: at once
    was, now_is = find_condition(before, "Progressing"), find_condition(after, "Progressing")
    if not was or not now_is or was.get("status") != "True" or now_is.get("status") != "True":
        return None  # a rollout starting or ending: at once
    try:
        since = datetime.strptime(str(was.get("lastTransitionTime")), TIME_FORMAT)
    except ValueError:
        return None
    left = PROGRESS_BATCH_SECONDS - (now - since.replace(tzinfo=UTC)).total_seconds()
    return left if left > 0 else None


def _other_than_progressing(conditions: list[Body]) -> list[Body]:
    return [c for c in conditions if c.get("type") != "Progressing"]
