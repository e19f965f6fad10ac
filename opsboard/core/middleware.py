"""Probes answered before the Host header is checked.

Kubelets and Prometheus reach a pod by its IP, which is rarely in
ALLOWED_HOSTS; these read-only endpoints are safe to answer for any Host.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse


class ProbeMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        from opsboard.core import probes
        from opsboard.engine.views import metrics_view

        self.get_response = get_response
        self.probes = {
            "/healthz": probes.healthz,
            "/readyz": probes.readyz,
            "/metrics": metrics_view,
        }

    def __call__(self, request: HttpRequest) -> HttpResponse:
        probe = self.probes.get(request.path_info)
        return probe(request) if probe else self.get_response(request)
