from __future__ import annotations

from django.apps import AppConfig


class DiagnosisConfig(AppConfig):
    name = "opsboard.diagnosis"
    label = "diagnosis"
