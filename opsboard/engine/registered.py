"""The controllers this deployment runs (OPSBOARD_CONTROLLERS), loaded once per process."""

from __future__ import annotations

from django.conf import settings

from controllers.base import Controller
from controllers.registry import load


def controllers() -> dict[str, Controller]:
    """{controller name: Controller} for the modules named in OPSBOARD_CONTROLLERS."""
    return load(tuple(settings.OPSBOARD_CONTROLLERS))
