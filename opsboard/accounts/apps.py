from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "opsboard.accounts"
    label = "accounts"

    def ready(self) -> None:
        from opsboard.accounts import receivers

        receivers.connect()
