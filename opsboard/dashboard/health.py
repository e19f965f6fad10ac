"""Whether the watcher keeps the mirror fresh and the workers reconcile, from the database."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Max, Q
from django.utils import timezone

from opsboard.engine.models import ReconcileRun
from opsboard.mirror.selectors import Freshness, mirror_freshness

WORKER_WINDOW = timedelta(minutes=10)


@dataclass(frozen=True)
class EngineHealth:
    mirror: Freshness
    last_run_at: datetime | None
    workers: list[str]  # the workers that recorded a run in the last WORKER_WINDOW
    runs_last_hour: int
    errors_last_hour: int


def engine_health() -> EngineHealth:
    now = timezone.now()
    hour = ReconcileRun.objects.filter(started_at__gte=now - timedelta(hours=1)).aggregate(
        runs=Count("id"), errors=Count("id", filter=Q(outcome__in=["error", "permanent"]))
    )
    workers = (
        ReconcileRun.objects.filter(started_at__gte=now - WORKER_WINDOW)
        .exclude(worker="")
        .order_by()  # the model's ordering would make DISTINCT per (worker, started_at)
        .values_list("worker", flat=True)
        .distinct()
    )
    return EngineHealth(
        mirror=mirror_freshness(),
        last_run_at=ReconcileRun.objects.aggregate(at=Max("started_at"))["at"],
        workers=sorted(workers),
        runs_last_hour=hour["runs"],
        errors_last_hour=hour["errors"],
    )
