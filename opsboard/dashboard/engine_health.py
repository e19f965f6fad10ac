"""Whether the watcher keeps the mirror fresh and the workers reconcile: the mirror's
freshness and the run log from the database, live workers and queue depths from Redis."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Max, Q
from django.utils import timezone

from opsboard.engine import selectors as engine
from opsboard.engine.models import ReconcileRun
from opsboard.engine.outcome import FAILED
from opsboard.mirror.selectors import Freshness, mirror_freshness


@dataclass(frozen=True)
class EngineHealth:
    mirror: Freshness
    queue: engine.EngineHealth  # live workers and queue depths
    last_run_at: datetime | None
    runs_last_hour: int
    errors_last_hour: int


def engine_health(*, scope: Q, freshness: Freshness | None = None) -> EngineHealth:
    """`scope`: the namespaces whose runs the person may count (Access.scope); `freshness`:
    the mirror's, if the caller has read it already."""
    runs = ReconcileRun.objects.filter(scope)
    hour = runs.filter(started_at__gte=timezone.now() - timedelta(hours=1))
    counts = hour.aggregate(runs=Count("id"), errors=Count("id", filter=Q(outcome__in=FAILED)))
    return EngineHealth(
        mirror=freshness or mirror_freshness(),
        queue=engine.engine_health(),
        last_run_at=runs.aggregate(at=Max("started_at"))["at"],
        runs_last_hour=counts["runs"],
        errors_last_hour=counts["errors"],
    )
