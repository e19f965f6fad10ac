"""The answer to any request about a CR deleted since its page was opened (gone.Gone): the
page says so in place of its live sections, its actions disabled, and polls no more."""

from __future__ import annotations

from http import HTTPStatus

from django.http import HttpResponse
from django.shortcuts import render

from opsboard.dashboard import polling
from opsboard.dashboard.gone import Gone, cr_gone_refuse
from opsboard.dashboard.http import DashboardRequest


def gone_response(request: DashboardRequest, gone: Gone, *, refusal: str = "") -> HttpResponse:
    context = {"gone": gone, "refusal": refusal}
    if not request.htmx:  # a page of its own, still a 404: there is nothing at this address
        return render(request, "dashboard/cr_gone.html", context, status=HTTPStatus.NOT_FOUND)
    response = render(request, "dashboard/_cr_gone.html", {**context, "oob_actions": True})
    if request.method == "GET":  # the live sections' poll
        response.status_code = polling.STOP_POLLING
    else:  # an action: its answer takes the place of the live sections, as a poll's would
        response["HX-Retarget"] = f"#cr-live-{gone.uid}"
        response["HX-Reswap"] = "outerHTML"
    return response


def refused(request: DashboardRequest, gone: Gone, *, audit: str = "") -> HttpResponse:
    """An action on a deleted CR: nothing is sent to the cluster; the attempt is audited as
    rejected when it is an audited `audit` action (an apply, a reconcile; not a review)."""
    if audit:
        cr_gone_refuse(user=request.user, gone=gone, action=audit)
    return gone_response(request, gone, refusal=gone.refusal)
