"""Derives the one-word health the UI filters on from an object's status conditions."""

from __future__ import annotations

from typing import Any

from controllers.pods import STUCK_REASONS

AVAILABLE, PROGRESSING, DEGRADED, UNKNOWN = "Available", "Progressing", "Degraded", "Unknown"


def _condition(conditions: list[dict[str, Any]], type_: str) -> str | None:
    for condition in conditions:
        if condition.get("type") == type_:
            return str(condition.get("status"))
    return None


def _pod_health(status: dict[str, Any]) -> str:
    if status.get("phase") == "Failed":
        return DEGRADED
    for container in status.get("containerStatuses") or []:
        if ((container.get("state") or {}).get("waiting") or {}).get("reason") in STUCK_REASONS:
            return DEGRADED
    if _condition(status.get("conditions") or [], "Ready") == "True":
        return AVAILABLE
    return PROGRESSING if status else UNKNOWN


def derive_health(kind: str, status: dict[str, Any], *, stale: bool) -> str:
    """Degraded=True wins; Available=True counts only when the status is not stale."""
    if kind == "Pod":  # pods say Ready, not Available
        return _pod_health(status)
    if kind == "Node":  # Ready, or its kubelet stopped reporting (Unknown) or is unwell
        ready = _condition(status.get("conditions") or [], "Ready")
        return UNKNOWN if ready is None else AVAILABLE if ready == "True" else DEGRADED
    conditions = status.get("conditions") or []
    if not conditions:
        return UNKNOWN
    if _condition(conditions, "Degraded") == "True":
        return DEGRADED
    if _condition(conditions, "Available") == "True" and not stale:
        return AVAILABLE
    return PROGRESSING
