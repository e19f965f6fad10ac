from __future__ import annotations

from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "opsboard.dashboard"
    label = "dashboard"
