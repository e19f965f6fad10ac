"""The request the dashboard's views see, for the type checker."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class DashboardRequest(HttpRequest):
    """Every dashboard view is behind login_required (so `user` is a User), and
    django-htmx's middleware sets `htmx` on every request."""

    user: User
    htmx: HtmxDetails
