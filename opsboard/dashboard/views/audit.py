"""Admins: the audit trail (with CSV export), the reconcile log across CRs, and charts.

An admin in some namespaces only sees the entries and runs of those namespaces."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.paginator import Paginator
from django.db.models import Q
from django.http import HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from opsboard.accounts.access import access_of
from opsboard.accounts.permissions import role_required
from opsboard.accounts.roles import Role
from opsboard.audit import charts, selectors
from opsboard.audit.export import audit_csv_rows
from opsboard.audit.models import AuditEntry
from opsboard.dashboard.forms import AuditFilterForm, RunFilterForm
from opsboard.dashboard.http import DashboardRequest
from opsboard.dashboard.kinds import all_kinds
from opsboard.engine.models import ReconcileRun


def _filters(form: AuditFilterForm | RunFilterForm) -> dict[str, Any]:
    """The filters set, of a valid form."""
    return {k: v for k, v in form.cleaned_data.items() if v not in (None, "")}


def _errors_text(form: AuditFilterForm) -> str:
    """The form's errors as the list page shows them beside each field, one line each."""
    return "".join(
        f"{form[name].label + ': ' if name in form.fields else ''}{' '.join(map(str, errors))}\n"
        for name, errors in form.errors.items()
    )


def _scope(request: DashboardRequest) -> Q:
    return access_of(request.user).scope(Role.ADMIN)


@require_GET
@role_required(Role.ADMIN)
def audit_list(request: DashboardRequest) -> HttpResponse:
    form = AuditFilterForm(request.GET)
    # An invalid filter lists nothing (the form says why), never everything unfiltered.
    entries = (
        selectors.audit_entries(scope=_scope(request), **_filters(form))
        if form.is_valid()
        else AuditEntry.objects.none()
    )
    page = Paginator(entries, 50).get_page(request.GET.get("page"))
    # No run ever observes a change of a kind no operator of ours runs for.
    generic = {name for name, info in all_kinds().items() if info.generic}
    context = {"form": form, "page": page, "query": request.GET.urlencode(), "generic": generic}
    return render(request, "dashboard/audit_list.html", context)


@require_GET
@role_required(Role.ADMIN)
def audit_export(request: DashboardRequest) -> HttpResponse | StreamingHttpResponse:
    form = AuditFilterForm(request.GET)
    if not form.is_valid():  # exporting everything instead would hide the mistake
        return HttpResponseBadRequest(_errors_text(form), content_type="text/plain; charset=utf-8")
    entries = selectors.audit_entries(scope=_scope(request), **_filters(form))
    response = StreamingHttpResponse(audit_csv_rows(entries), content_type="text/csv")
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    response["Content-Disposition"] = f'attachment; filename="opsboard-audit-{stamp}.csv"'
    return response


@require_GET
@role_required(Role.ADMIN)
def run_list(request: DashboardRequest) -> HttpResponse:
    form = RunFilterForm(request.GET)
    runs = (
        selectors.reconcile_runs(scope=_scope(request), **_filters(form))
        if form.is_valid()
        else ReconcileRun.objects.none()
    )
    page = Paginator(runs, 50).get_page(request.GET.get("page"))
    return render(request, "dashboard/run_list.html", {"form": form, "page": page})


@require_GET
@role_required(Role.ADMIN)
def run_charts(request: DashboardRequest) -> HttpResponse:
    hours = 24 if request.GET.get("hours") not in {"6", "72"} else int(request.GET["hours"])
    until = timezone.now()
    context = {
        "charts": charts.run_charts(
            since=until - timedelta(hours=hours), until=until, scope=_scope(request)
        ),
        "hours": hours,
        "width": charts.WIDTH,
        "height": charts.HEIGHT,
        "pad": charts.PAD,
        "outcomes": charts.OUTCOMES,
    }
    return render(request, "dashboard/run_charts.html", context)
