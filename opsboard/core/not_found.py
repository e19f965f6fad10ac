"""The 404 page: what was not found, in words; never the name of an exception class."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseNotFound
from django.template import loader
from django.urls import Resolver404


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A view's own reason (`raise Http404("No controller named 'x'")`) is shown as it is;
    an address no URL pattern takes (Resolver404, whose argument is the resolver's dict)
    or an Http404 without a reason says there is nothing at that address."""
    reason = exception.args[0] if exception.args else None
    if isinstance(exception, Resolver404) or not isinstance(reason, str) or not reason:
        reason = f"There is nothing at {request.path}."
    page = loader.render_to_string("404.html", {"reason": reason}, request)
    return HttpResponseNotFound(page)
