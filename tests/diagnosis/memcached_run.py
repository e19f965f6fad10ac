"""The Memcached operator run for real (a Celery worker and a watcher) and a CR created for
it: how each diagnosis scenario begins."""

from __future__ import annotations

from typing import Any

from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from tests.dashboard.mirror_factory import MEMCACHED_API
from tests.fixtures.celery import EngineProcesses


def start_memcached_operator(engine: EngineProcesses) -> None:
    """With whatever `engine.extra_env` the test set first."""
    engine.controllers = "controllers.memcached"
    engine.start_worker()
    engine.start_watcher()


def start_operator_in(
    engine: EngineProcesses, namespace: str, controllers: str = "controllers.memcached"
) -> None:
    """The operators of `controllers`, watching and leading in `namespace` only (a shared
    cluster holds other people's CRs), with whatever else `engine.extra_env` has."""
    engine.extra_env["OPSBOARD_LEASE_NAMESPACE"] = namespace
    engine.extra_env["OPSBOARD_WATCH_NAMESPACES"] = namespace
    engine.controllers = controllers
    engine.start_worker()
    engine.start_watcher()


def create_memcached(kube: ApiKube, namespace: str, name: str, *, size: int, **spec: Any) -> None:
    kube.create(MEMCACHED, {
        "apiVersion": MEMCACHED_API, "kind": "Memcached",
        "metadata": {"name": name, "namespace": namespace}, "spec": {"size": size, **spec},
    })  # fmt: skip
