"""opsboard: Kubernetes operators as Celery workers, with a Django + htmx dashboard."""

from __future__ import annotations

from opsboard.celery import app as celery_app

__all__ = ["celery_app"]
