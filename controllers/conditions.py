"""Status conditions in the shape kubectl and other tools understand (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from controllers.base import Body
from controllers.fields import deep_get

TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"  # lastTransitionTime's, as Kubernetes writes it


def parse_time(text: object) -> datetime | None:
    """A Kubernetes timestamp (TIME_FORMAT, or a MicroTime with its fraction), in UTC; None
    where it is missing or unreadable."""
    try:
        return datetime.fromisoformat(str(text)) if text else None
    except ValueError:
        return None


def find_condition(conditions: list[Body] | None, type_: str) -> Body | None:
    return next((c for c in conditions or [] if c.get("type") == type_), None)


def condition_of(obj: Body | None, type_: str) -> Body:
    """The object's status condition of `type_` ("Available", "Ready"), or {} if it has none."""
    return find_condition(deep_get(obj, "status.conditions"), type_) or {}


Verdict = tuple[str, bool, tuple[str, str]]  # (condition type, true?, (reason, message))


def conditions_from(
    cr: Body, verdicts: Iterable[Verdict], *, observed_generation: int, now: str
) -> list[Body]:
    """The CR's conditions with each verdict set, in order (see set_condition)."""
    conditions: list[Body] = deep_get(cr, "status.conditions", [])
    for type_, truth, (reason, message) in verdicts:
        conditions = set_condition(
            conditions,
            type_=type_,
            status=truth,
            reason=reason,
            message=message,
            observed_generation=observed_generation,
            now=now,
        )
    return conditions


def set_condition(
    conditions: list[Body] | None,
    *,
    type_: str,
    status: bool,
    reason: str,
    message: str,
    observed_generation: int,
    now: str,
) -> list[Body]:
    """A copy of `conditions` with `type_` set; lastTransitionTime moves only when status does."""
    old = find_condition(conditions, type_)
    text = "True" if status else "False"
    changed = old is None or old.get("status") != text
    new = {
        "type": type_,
        "status": text,
        "reason": reason,
        "message": message,
        "observedGeneration": observed_generation,
        "lastTransitionTime": now if old is None or changed else old.get("lastTransitionTime", now),
    }
    if old is None:
        return [*(conditions or []), new]
    return [new if c.get("type") == type_ else c for c in conditions or []]
