"""The page of an unhandled error: a database that does not answer is said so, as a 503
(the request may succeed in a moment), not as an anonymous "Server Error (500)"."""

from __future__ import annotations

import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template import loader


def server_error(request: HttpRequest) -> HttpResponse:
    # Django calls the handler while it handles the exception: sys.exc_info() holds it.
    if isinstance(sys.exc_info()[1], OperationalError | InterfaceError):
        page = loader.render_to_string("error_page.html", {
            "title": "Database unavailable",
            "what": "opsboard cannot reach its database right now. Nothing was changed.",
            "todo": "Try again in a moment. If it lasts, tell whoever runs opsboard: its "
                    "/readyz says what is down, and its log why.",
        })  # fmt: skip
        return HttpResponse(page, status=503, headers={"Retry-After": "10"})
    page = loader.render_to_string("error_page.html", {
        "title": "Something went wrong",
        "what": "opsboard failed to answer this request.",
        "todo": "Reload the page to see what is true now; if it fails again, tell whoever "
                "runs opsboard (the error is in its log).",
    })  # fmt: skip
    return HttpResponse(page, status=500)
