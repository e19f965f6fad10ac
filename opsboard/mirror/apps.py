from __future__ import annotations

from django.apps import AppConfig


class MirrorConfig(AppConfig):
    name = "opsboard.mirror"
    label = "mirror"
