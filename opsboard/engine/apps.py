from __future__ import annotations

from django.apps import AppConfig


class EngineConfig(AppConfig):
    name = "opsboard.engine"
    label = "engine"
