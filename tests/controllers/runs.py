"""The engine's reconcile log, as the scenario tests read it."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Sum

from controllers.base import Key
from opsboard.engine.models import ReconcileRun


def _runs(key: Key):  # type: ignore[no-untyped-def]
    return ReconcileRun.objects.filter(
        controller=key.controller, namespace=key.namespace, name=key.name
    )


def run_count(key: Key) -> int:
    """Every run of `key`, folded no-op runs included."""
    runs = _runs(key)
    return runs.count() + (runs.aggregate(folded=Sum("folded_count"))["folded"] or 0)


def actions_since(key: Key, since: datetime) -> list[str]:
    return [a for run in _runs(key).filter(started_at__gte=since) for a in run.actions]
