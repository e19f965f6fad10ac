"""A session that ends while a page is open: the page's next htmx request (a poll, an
action) is sent to the login page. The XMLHttpRequest behind htmx follows a redirect by
itself and would swap the login page into the page, so htmx is told to load it instead."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.http import HttpRequest
from django.http.response import HttpResponseBase, HttpResponseRedirectBase
from django.shortcuts import resolve_url
from django_htmx.http import HttpResponseClientRedirect


class HtmxLoginRedirectMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if not request.headers.get("HX-Request") or not isinstance(
            response, HttpResponseRedirectBase
        ):
            return response
        login = resolve_url(settings.LOGIN_URL)
        if urlsplit(response["Location"]).path != login:
            return response
        # Back to the page the person was on, not to the fragment its poll asked for.
        page = urlsplit(request.headers.get("HX-Current-URL", ""))
        back = page.path + (f"?{page.query}" if page.query else "") if page.path else "/"
        return HttpResponseClientRedirect(f"{login}?{urlencode({'next': back})}")
