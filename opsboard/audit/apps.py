from __future__ import annotations

from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "opsboard.audit"
    label = "audit"

    def ready(self) -> None:
        from opsboard.audit import receivers

        receivers.connect()
