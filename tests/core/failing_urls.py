"""A URLconf whose views fail as a view does when its database or its code does."""

from __future__ import annotations

from django.db import OperationalError
from django.http import HttpRequest, HttpResponse
from django.urls import path

from opsboard.urls import handler500


def database_down(request: HttpRequest) -> HttpResponse:
    raise OperationalError('connection to server at "10.0.0.9", port 5432 failed')


def broken(request: HttpRequest) -> HttpResponse:
    raise ValueError("a bug")


urlpatterns = [path("db/", database_down), path("bug/", broken)]
__all__ = ["handler500", "urlpatterns"]
