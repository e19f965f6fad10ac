from __future__ import annotations

from http import HTTPStatus

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from opsboard.accounts.access import access_of, granters
from opsboard.accounts.roles import Role
from opsboard.dashboard import engine_health, polling, selectors
from opsboard.dashboard.http import DashboardRequest
from opsboard.dashboard.kinds import all_kinds
from opsboard.diagnosis.gather import needs_attention
from opsboard.engine.models import ReconcileRun
from opsboard.engine.outcome import FAILED
from opsboard.mirror.selectors import mirror_freshness


@require_GET
@login_required
def overview(request: DashboardRequest) -> HttpResponse:
    access = access_of(request.user)
    if not access.anywhere(Role.VIEWER):  # zeros and "all Available" would mislead
        return render(request, "dashboard/no_role.html", {"granters": granters()})
    kinds = list(all_kinds().values())
    scope = access.scope()
    freshness = mirror_freshness()  # read once: the attention list, the engine and the banner
    engine = engine_health.engine_health(scope=scope, freshness=freshness)
    recent = ReconcileRun.objects.filter(scope).order_by("-started_at")
    runs, errors = list(recent[:10]), list(recent.filter(outcome__in=FAILED)[:10])
    shown = polling.overview_token(engine=engine, runs=[*runs, *errors], scope=scope)
    if polling.nothing_to_swap(request, shown):
        return HttpResponse(status=HTTPStatus.NO_CONTENT)  # htmx keeps the page as it is
    seen = access.namespaces()  # None: every namespace
    attention, attention_total = needs_attention(
        kinds=kinds, scope=scope, seen=seen, freshness=freshness
    )
    counts = selectors.kind_counts(kinds=kinds, scope=scope)
    context = {
        "attention": attention,
        "attention_total": attention_total,
        "counts": counts,
        # Zeros in a view limited to some namespaces must not read as an empty cluster.
        "namespaces": None if seen is None else sorted(seen),
        "total": sum(c.total for c in counts),
        "engine": engine,
        "freshness": freshness,
        "recent_runs": runs,
        "recent_errors": errors,
        "shown": shown,
    }
    template = "dashboard/_overview_live.html" if request.htmx else "dashboard/overview.html"
    return render(request, template, context)
