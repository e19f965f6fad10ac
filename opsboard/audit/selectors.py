"""Reads for the audit pages: filtered audit entries and the reconcile log across CRs."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db.models import Avg, Count, Max, Q, QuerySet
from django.db.models.functions import TruncHour

from opsboard.audit.models import AuditEntry
from opsboard.engine.models import ReconcileRun


def audit_entries(
    *,
    scope: Q,
    entry: int | None = None,
    user: str = "",
    kind: str = "",
    namespace: str = "",
    name: str = "",
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[AuditEntry]:
    """`scope`: the namespaces whose entries the person may read (Access.scope)."""
    entries = AuditEntry.objects.filter(scope).select_related("observed_by").order_by("-at")
    if entry:
        entries = entries.filter(pk=entry)
    if user:
        entries = entries.filter(username=user)
    if kind:
        entries = entries.filter(Q(kind=kind) | Q(controller=kind))
    if namespace:
        entries = entries.filter(namespace=namespace)
    if name:
        entries = entries.filter(name__icontains=name)
    if since:
        entries = entries.filter(at__gte=since)
    if until:
        entries = entries.filter(at__lt=until)
    return entries


def reconcile_runs(
    *,
    scope: Q,
    controller: str = "",
    namespace: str = "",
    name: str = "",
    outcome: str = "",
    min_ms: float | None = None,
    max_ms: float | None = None,
    since: datetime | None = None,
) -> QuerySet[ReconcileRun]:
    runs = ReconcileRun.objects.filter(scope).order_by("-started_at")
    if controller:
        runs = runs.filter(controller=controller)
    if namespace:
        runs = runs.filter(namespace=namespace)
    if name:
        runs = runs.filter(name__icontains=name)
    if outcome:
        runs = runs.filter(outcome=outcome)
    if min_ms is not None:
        runs = runs.filter(duration_ms__gte=min_ms)
    if max_ms is not None:
        runs = runs.filter(duration_ms__lte=max_ms)
    if since:
        runs = runs.filter(started_at__gte=since)
    return runs


def run_buckets(*, since: datetime, scope: Q) -> dict[str, list[dict[str, Any]]]:
    """Per controller, per hour since `since`: run counts by outcome, mean and max duration."""
    rows = (
        ReconcileRun.objects.filter(scope, started_at__gte=since)
        .annotate(hour=TruncHour("started_at"))
        .values("controller", "hour")
        .annotate(
            total=Count("id"),
            **{o: Count("id", filter=Q(outcome=o)) for o in ReconcileRun.Outcome.values},
            mean_ms=Avg("duration_ms"),
            max_ms=Max("duration_ms"),
        )
        .order_by("controller", "hour")
    )
    buckets: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        buckets.setdefault(row["controller"], []).append(row)
    return buckets


def hours(*, since: datetime, until: datetime) -> list[datetime]:
    start = since.replace(minute=0, second=0, microsecond=0)
    return [
        start + timedelta(hours=i) for i in range(int((until - start).total_seconds() // 3600) + 1)
    ]
