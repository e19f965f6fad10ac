"""Reading CRs: lists (one kind or all) and the detail page with its live sections."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET

from opsboard.accounts.access import access_of
from opsboard.accounts.kube_identity import kube_identity
from opsboard.accounts.roles import Role
from opsboard.dashboard import crclient, pod_logs, polling, selectors
from opsboard.dashboard.cluster_access import field_refusals
from opsboard.dashboard.forms import ListFilterForm, PatchForm
from opsboard.dashboard.gone import Gone, cr_or_gone
from opsboard.dashboard.history import cr_history
from opsboard.dashboard.http import DashboardRequest
from opsboard.dashboard.kinds import KindInfo, all_kinds, kind_get
from opsboard.dashboard.views.gone import gone_response
from opsboard.diagnosis.gather import cr_diagnosis, engine_wide
from opsboard.mirror.models import KubeObject
from opsboard.mirror.selectors import mirror_freshness, owner_tree


def _cr_list(
    request: DashboardRequest, kinds: list[KindInfo], info: KindInfo | None
) -> HttpResponse:
    query = request.GET.copy()
    query.pop("shown", None)  # the rows' poll's token (polling.list_token), not a filter
    filters = ListFilterForm(query)
    params = filters.cleaned_data if filters.is_valid() else {}
    scope = access_of(request.user).scope()
    page = selectors.cr_page(kinds=kinds, scope=scope, page=query.get("page", 1), **params)
    shown = polling.list_token(page)
    if polling.nothing_to_swap(request, shown):
        return HttpResponse(status=HTTPStatus.NO_CONTENT)  # htmx keeps the rows as they are
    context: dict[str, Any] = {
        "info": info,
        "kinds": all_kinds().values(),
        "filters": filters,
        "page": page,
        "query": query,
        "shown": shown,
    }
    # Polls and filter changes swap only the table; a plain GET gets the whole page.
    if request.htmx:
        return render(request, "dashboard/_cr_table.html", context)
    context["namespaces"] = selectors.namespaces(kinds=kinds, scope=scope)
    return render(request, "dashboard/cr_list.html", context)


@require_GET
@login_required
def cr_list_all(request: DashboardRequest) -> HttpResponse:
    return _cr_list(request, list(all_kinds().values()), None)


@require_GET
@login_required
def cr_list(request: DashboardRequest, controller: str) -> HttpResponse:
    info = kind_get(controller)
    return _cr_list(request, [info], info)


def _live_context(request: DashboardRequest, info: KindInfo, cr: KubeObject) -> dict[str, Any]:
    mirrored = owner_tree(root=cr)  # read once: the tree and the diagnosis both walk it
    tree = selectors.owner_tree(info=info, cr=cr, mirrored=mirrored)
    freshness = mirror_freshness()  # read once: the diagnosis and the page's banner
    pods = selectors.tree_pods(tree)
    # Nodes belong to no namespace: a person with roles in some only is not shown them.
    seen = access_of(request.user).namespaces()
    diagnosis = cr_diagnosis(
        info=info, cr=cr, tree=mirrored, engine=engine_wide(freshness), seen=seen
    )
    return {
        "diagnosis": diagnosis,
        "freshness": freshness,
        "history": cr_history(cr=cr, storage_path=info.controller.fields.storage),
        "info": info,
        "cr": cr,
        "view": selectors.view_body(cr),
        "tree": selectors.tree_rows(tree),
        "pods": pods,
        "node_states": selectors.node_states(pods) if seen is None else {},
        "runs": selectors.cr_runs(info=info, namespace=cr.namespace, name=cr.name),
        "events": selectors.cr_events(cr=cr),
    }


def _with_live(request: DashboardRequest, context: dict[str, Any]) -> dict[str, Any]:
    """The context with its live sections rendered and their token (polling.rendered_token),
    which their poll carries: a poll that would render the same is answered 204."""
    html = render_to_string("dashboard/_cr_live_sections.html", context, request)
    return {**context, "live_html": html, "shown": polling.rendered_token(html)}


def _cluster_refusal(
    request: DashboardRequest, info: KindInfo, namespace: str, form: PatchForm
) -> str:
    """With impersonation on, what the cluster lets this operator patch here, asked before
    the form is shown: the fields it refuses are held, each saying why; "" unless it
    refuses them all (then the whole form is, with this)."""
    person = kube_identity(request.user)
    if person is None or not access_of(request.user).allows(Role.OPERATOR, namespace):
        return ""
    try:
        refusals = field_refusals(info=info, namespace=namespace, as_user=person)
    except crclient.ClusterError:
        return ""  # unreachable: the review says so when it is asked for
    if refusals and set(refusals) >= set(form.fields):
        return " ".join(dict.fromkeys(refusals.values()))
    form.refuse(refusals)
    return ""


@require_GET
@login_required
def cr_detail(
    request: DashboardRequest, controller: str, namespace: str, name: str
) -> HttpResponse:
    info = kind_get(controller)
    cr = cr_or_gone(info=info, namespace=namespace, name=name)
    if isinstance(cr, Gone):
        return gone_response(request, cr)
    context = _live_context(request, info, cr)
    context["form"] = form = PatchForm(info=info, cr=cr)
    context["cluster_refusal"] = _cluster_refusal(request, info, namespace, form)
    return render(request, "dashboard/cr_detail.html", _with_live(request, context))


@require_GET
@login_required
def cr_live(request: DashboardRequest, controller: str, namespace: str, name: str) -> HttpResponse:
    """The sections that change while a rollout runs, polled while the tab is visible;
    nothing to swap while they would render the same (a person's text selection stays).
    Once the object is deleted, a notice takes their place and the polling stops."""
    info = kind_get(controller)
    cr = cr_or_gone(info=info, namespace=namespace, name=name, uid=request.GET.get("uid", ""))
    if isinstance(cr, Gone):
        return gone_response(request, cr)
    context = _with_live(request, _live_context(request, info, cr))
    if polling.nothing_to_swap(request, context["shown"]):
        return HttpResponse(status=HTTPStatus.NO_CONTENT)
    return render(request, "dashboard/_cr_live.html", context)


@require_GET
@login_required
def cr_pod_log(
    request: DashboardRequest, controller: str, namespace: str, name: str, pod: str
) -> HttpResponse:
    """A pod of the CR, its log (pod_logs.py): `container`, and `previous=1` for the run
    that ended. A pod the CR does not own is a 404, as a CR the person cannot see is.
    `follow=1` (the run going on) reads it again every few seconds while the tab is
    visible, as `kubectl logs -f` would show it: nothing to swap while it reads the same,
    and the polling stops once the pod is gone."""
    info = kind_get(controller)
    cr = cr_or_gone(info=info, namespace=namespace, name=name)
    if isinstance(cr, Gone):
        return gone_response(request, cr)
    previous = request.GET.get("previous") == "1"
    follow = request.GET.get("follow") == "1" and not previous
    if (found := pod_logs.owned_pod(cr, pod)) is None:
        if request.htmx and follow:  # the pod followed was deleted, or a rollout replaced it
            context = {"info": info, "cr": cr, "pod": pod}
            return render(request, "dashboard/_pod_log_gone.html", context,
                          status=polling.STOP_POLLING)  # fmt: skip
        raise Http404(f"{cr.kind} {namespace}/{name} has no pod {pod} (in the mirror).")
    log = pod_logs.read(
        found, container=request.GET.get("container"), previous=previous,
        as_user=kube_identity(request.user),
    )  # fmt: skip
    context = {"info": info, "cr": cr, "log": log, "lines": pod_logs.LINES, "follow": follow}
    html = render_to_string("dashboard/_pod_log.html", context, request)
    shown = polling.rendered_token(html)
    if follow and polling.nothing_to_swap(request, shown):
        return HttpResponse(status=HTTPStatus.NO_CONTENT)
    poll = urlencode({"container": log.container, "follow": "1", "shown": shown})
    context |= {"log_html": html, "poll_url": f"{request.path}?{poll}"}
    template = "dashboard/_pod_log_live.html" if request.htmx else "dashboard/pod_log.html"
    return render(request, template, context)


@require_GET
@login_required
def cr_pod_log_whole(
    request: DashboardRequest, controller: str, namespace: str, name: str, pod: str
) -> HttpResponse:
    """The whole log of one of the CR's pods (to pod_logs.WHOLE_BYTES), as a file: what
    `kubectl logs` writes, for a person without kubectl. A refusal is the log page's."""
    info = kind_get(controller)
    cr = cr_or_gone(info=info, namespace=namespace, name=name)
    if isinstance(cr, Gone):
        return gone_response(request, cr)
    if (found := pod_logs.owned_pod(cr, pod)) is None:
        raise Http404(f"{cr.kind} {namespace}/{name} has no pod {pod} (in the mirror).")
    log = pod_logs.read(
        found, container=request.GET.get("container"),
        previous=request.GET.get("previous") == "1", as_user=kube_identity(request.user),
        whole=True,
    )  # fmt: skip
    if log.error:
        context = {"info": info, "cr": cr, "log": log, "lines": pod_logs.LINES}
        context["log_html"] = render_to_string("dashboard/_pod_log.html", context, request)
        return render(request, "dashboard/pod_log.html", context)
    response = HttpResponse(log.text, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{log.filename}"'
    return response
