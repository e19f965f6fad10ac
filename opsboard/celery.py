"""The Celery app. Settings live in opsboard/settings.py under the CELERY_ prefix."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "opsboard.settings")

app = Celery("opsboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
