"""The Memcached operator run for real (a Celery worker and a watcher) and a CR created for
it: how each diagnosis scenario begins."""

from __future__ import annotations

from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from tests.dashboard.mirror_factory import MEMCACHED_API
from tests.fixtures.celery import EngineProcesses


def start_memcached_operator(engine: EngineProcesses) -> None:
    """With whatever `engine.extra_env` the test set first."""
    engine.controllers = "controllers.memcached"
    engine.start_worker()
    engine.start_watcher()


def create_memcached(kube: ApiKube, namespace: str, name: str, *, size: int) -> None:
    kube.create(MEMCACHED, {
        "apiVersion": MEMCACHED_API, "kind": "Memcached",
        "metadata": {"name": name, "namespace": namespace}, "spec": {"size": size},
    })  # fmt: skip
