"""Whether the watcher keeps the mirror fresh and the workers reconcile: the mirror's
freshness and the run log from the database, live workers and queue depths from Redis."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Max, Q
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
    return EngineHealth(
        mirror=freshness or mirror_freshness(),
        queue=engine.engine_health(),
        last_run_at=runs.aggregate(at=Max("started_at"))["at"],
        # Two counts, each read from an index alone (started_at; outcome, started_at):
        # one count of both read every run of the hour from the table, on every poll.
        runs_last_hour=hour.count(),
        errors_last_hour=hour.filter(outcome__in=FAILED).count(),
    )
