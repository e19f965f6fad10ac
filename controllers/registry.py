"""Finds the registered controllers: each dotted module exposes `CONTROLLER: Controller`."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from functools import cache

from controllers.base import Controller, Kind

DEFAULT = (
    "controllers.memcached",
    "controllers.webserver",
    "controllers.bookstore",
    "controllers.ptemplate",
)


@cache
def load(modules: tuple[str, ...] = DEFAULT) -> dict[str, Controller]:
    """{controller name: Controller}, in the order given; a bad path fails loudly."""
    controllers: dict[str, Controller] = {}
    for path in modules:
        module = importlib.import_module(path)
        controller = getattr(module, "CONTROLLER", None)
        if not isinstance(controller, Controller):
            raise ImportError(f"{path} has no CONTROLLER of type controllers.base.Controller")
        if controller.name in controllers:
            raise ImportError(f"{path}: a controller named {controller.name!r} exists already")
        controllers[controller.name] = controller
    return controllers


def primary_owner(
    controllers: Sequence[Controller], api_version: str, kind: str
) -> Controller | None:
    """The controller whose primary kind this is, if any."""
    for controller in controllers:
        if controller.primary.api_version == api_version and controller.primary.kind == kind:
            return controller
    return None


def watched_kinds(controllers: Sequence[Controller]) -> list[Kind]:
    """Every primary and owned kind, once each, primaries first."""
    kinds: dict[str, Kind] = {}
    for controller in controllers:
        kinds.setdefault(controller.primary.resource, controller.primary)
    for controller in controllers:
        for kind in controller.owns:
            kinds.setdefault(kind.resource, kind)
    return list(kinds.values())
