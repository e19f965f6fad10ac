from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST

from opsboard.engine import metrics


@require_GET
@never_cache
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus scrape endpoint, summed over every worker process."""
    return HttpResponse(metrics.exposition(), content_type=CONTENT_TYPE_LATEST)
