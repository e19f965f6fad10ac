"""Probes: /healthz says the process serves; /readyz that its database and Redis answer.

Both answer anyone (kubelets and scrapers reach a pod by its IP): /readyz names what is
down, never the driver's message, which holds the server's address. The log has it.
"""

from __future__ import annotations

import logging

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

log = logging.getLogger(__name__)


@require_GET
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


@require_GET
@never_cache
def readyz(request: HttpRequest) -> JsonResponse:
    checks: dict[str, str] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as exc:
        log.warning("readyz: the database does not answer: %s", exc)
        checks["database"] = "unavailable"
    try:
        redis.Redis.from_url(settings.REDIS_URL, socket_timeout=1, socket_connect_timeout=1).ping()
        checks["redis"] = "ok"
    except redis.RedisError as exc:
        log.warning("readyz: Redis does not answer: %s", exc)
        checks["redis"] = "unavailable"
    ready = all(value == "ok" for value in checks.values())
    return JsonResponse(
        {"status": "ok" if ready else "unavailable", **checks}, status=200 if ready else 503
    )
