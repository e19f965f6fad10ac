"""Changing a CR (operators): the size/image patch in two steps, a revert from the history
(reviewed and applied the same way), and "Reconcile now".

Every response to an htmx form is a 200 re-render of the panel, so htmx (which swaps no
4xx here) shows errors in place; on a CR deleted since the page was opened, the page says so
instead (views.gone). Without htmx, an apply the cluster refuses is a 403, as opsboard's own
refusals are."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from opsboard.accounts.kube_identity import kube_identity
from opsboard.audit.models import AuditEntry
from opsboard.dashboard.forms import PatchForm
from opsboard.dashboard.gone import Gone, cr_or_gone
from opsboard.dashboard.history import conflict_report, revert_plan
from opsboard.dashboard.http import DashboardRequest
from opsboard.dashboard.kinds import kind_get
from opsboard.dashboard.patching import cr_patch_apply, cr_patch_review
from opsboard.dashboard.reconciling import cr_reconcile_now
from opsboard.dashboard.refusals import change_required
from opsboard.dashboard.views.gone import refused


def _panel(request: DashboardRequest, context: dict[str, object]) -> HttpResponse:
    # htmx swaps the panel; without JavaScript the panel is shown on a page of its own.
    template = "dashboard/_patch_panel.html" if request.htmx else "dashboard/patch_page.html"
    return render(request, template, context)


@require_POST
@change_required(AuditEntry.Action.PATCH)
def cr_patch(request: DashboardRequest, controller: str, namespace: str, name: str) -> HttpResponse:
    """Step 1: validate against the schema, then show the server's dry-run diff."""
    info = kind_get(controller)
    cr = cr_or_gone(info=info, namespace=namespace, name=name, uid=request.POST.get("uid", ""))
    if isinstance(cr, Gone):
        return refused(request, cr)
    form = PatchForm(request.POST, info=info, cr=cr)
    context = {"info": info, "cr": cr, "form": form, "step": "form"}
    if form.is_valid():
        review = cr_patch_review(
            info=info, namespace=namespace, name=name, changes=form.changes(),
            as_user=kube_identity(request.user),
        )  # fmt: skip
        context.update(review=review, step="form" if review.error else "review")
        form.refused_as_is(review.untouched)
    return _panel(request, context)


@require_POST
@change_required(AuditEntry.Action.PATCH)
def cr_revert(
    request: DashboardRequest, controller: str, namespace: str, name: str, change: str
) -> HttpResponse:
    """Step 1 of a revert: the usual review, with the values from before `change`."""
    info = kind_get(controller)
    cr = cr_or_gone(info=info, namespace=namespace, name=name, uid=request.POST.get("uid", ""))
    if isinstance(cr, Gone):
        return refused(request, cr)
    plan = revert_plan(cr=cr, change=change)
    review = cr_patch_review(
        info=info, namespace=namespace, name=name, changes=plan.changes,
        as_user=kube_identity(request.user),
    )  # fmt: skip
    context = {
        "info": info, "cr": cr, "form": PatchForm(info=info, cr=cr), "revert": change,
        "revert_label": plan.label, "review": review,
        "step": "form" if review.error else "review",
    }  # fmt: skip
    return _panel(request, context)


@require_POST
@change_required(AuditEntry.Action.PATCH)
def cr_patch_confirm(
    request: DashboardRequest, controller: str, namespace: str, name: str
) -> HttpResponse:
    """Step 2: apply exactly what was reviewed, conditioned on its resourceVersion. Refused
    because the object changed: say what changed, and review the same values again."""
    info = kind_get(controller)
    cr = cr_or_gone(info=info, namespace=namespace, name=name, uid=request.POST.get("uid", ""))
    if isinstance(cr, Gone):
        return refused(request, cr, audit=AuditEntry.Action.PATCH)
    form = PatchForm(request.POST, info=info, cr=cr)
    context: dict[str, Any] = {"info": info, "cr": cr, "form": form, "step": "form"}
    extra: dict[str, Any] = {}
    if revert := request.POST.get("revert", ""):
        plan = revert_plan(cr=cr, change=revert)
        changes = plan.changes
        extra = {"reverts": plan.reverts, "reverts_generation": plan.reverts_generation}
        context.update(revert=revert, revert_label=plan.label)
    elif form.is_valid():
        changes = form.changes(request.POST.getlist("reviewed") or None)
    else:
        return _panel(request, context)
    applied = cr_patch_apply(
        user=request.user, info=info, namespace=namespace, name=name, changes=changes,
        resource_version=request.POST.get("resource_version", ""),
        as_user=kube_identity(request.user), **extra,
    )  # fmt: skip
    context.update(applied=applied, step="applied" if applied.ok else "form")
    if applied.conflict:
        review = cr_patch_review(
            info=info, namespace=namespace, name=name, changes=changes,
            as_user=kube_identity(request.user),
        )  # fmt: skip
        if not review.error:
            reviewed = request.POST.get("reviewed_generation", "")
            context.update(
                review=review,
                step="review",
                conflict=conflict_report(
                    cr=cr,
                    reviewed_generation=int(reviewed) if reviewed.isdigit() else 0,
                    generation=review.generation,
                    spec=review.spec,
                ),
            )
    response = _panel(request, context)
    if applied.forbidden and not request.htmx:
        response.status_code = HTTPStatus.FORBIDDEN
    if context["step"] == "applied":
        response["HX-Trigger"] = "cr-changed"  # the live sections refresh now, not in 2 s
    return response


@require_POST
@change_required(AuditEntry.Action.RECONCILE)
def cr_reconcile(
    request: DashboardRequest, controller: str, namespace: str, name: str
) -> HttpResponse:
    info = kind_get(controller)
    cr = cr_or_gone(info=info, namespace=namespace, name=name, uid=request.POST.get("uid", ""))
    if isinstance(cr, Gone):
        return refused(request, cr, audit=AuditEntry.Action.RECONCILE)
    entry = cr_reconcile_now(user=request.user, info=info, cr=cr)
    if not request.htmx:
        messages.info(request, entry.message)
        return redirect("cr_detail", controller, namespace, name)
    response = render(request, "dashboard/_reconcile_msg.html", {"cr": cr, "entry": entry})
    response["HX-Trigger"] = "cr-changed"  # the log refreshes now, then as it polls
    return response
