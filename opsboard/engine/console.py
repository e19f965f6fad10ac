"""One line per reconcile that did something, for a person reading `make run`'s console:

    memcached default/web  event → Success  scaled 3→5, status.nodes 5 pods  41 ms

Runs that changed nothing print nothing; errors print in full (they may span lines).
"""

from __future__ import annotations

import re

from controllers.base import Key
from opsboard.engine.outcome import RunOutcome, outcome_label

# Kubernetes-style action lines, shortened where the object is the CR's own child.
_SHORTER = (
    (re.compile(r"^Scaled \S+ \S+ replicas (\S+)$"), r"scaled \1"),
    (re.compile(r"^Updated \S+ \S+ image (\S+)$"), r"image \1"),
    (re.compile(r"^Updated status\.nodes: (.*)$"), r"status.nodes \1"),
)
# Of a status update, the conditions that turned True say enough (Available, Degraded, ...).
_STATUS = re.compile(r"^Updated status: (.*)$")
_TRUE_CONDITION = re.compile(r"\b\w+=True \(\w+\)")


def reconcile_line(
    key: Key, trigger: str, outcome: RunOutcome, actions: list[str], seconds: float
) -> str | None:
    """The console line of one run, or None when it changed nothing worth telling (a status
    update that turned no condition True, say) and failed in nothing."""
    said = ", ".join(short for action in actions if (short := _shorten(action)))
    if not said and not outcome.error:
        return None
    if outcome.error:
        said = f"{said}; {outcome.error}" if said else outcome.error
    status = outcome_label(outcome.status)
    if outcome.requeue_after:
        status += f" (again in {outcome.requeue_after:g} s)"
    return (
        f"{key.controller} {key.namespace}/{key.name}  {trigger} → {status}  {said}  "
        f"{seconds * 1000:.0f} ms"
    )


def _shorten(action: str) -> str:
    if status := _STATUS.match(action):
        return ", ".join(_TRUE_CONDITION.findall(status.group(1)))
    for pattern, replacement in _SHORTER:
        if pattern.match(action):
            return pattern.sub(replacement, action)
    return action
