"""The Memcached operator run for real (a Celery worker and a watcher) and a CR created for
it: how each diagnosis scenario begins (a Ptemplate's too); and what the scenarios wait for."""

from __future__ import annotations

from typing import Any

from django.test import Client

from controllers.base import Body, Kind
from controllers.conditions import condition_of
from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from controllers.ptemplate.desired import PTEMPLATE
from opsboard.diagnosis.observed import Finding
from tests.controllers.ptemplate_helpers import SPEC, install_kmm_crd, make_secret
from tests.dashboard.mirror_factory import MEMCACHED_API
from tests.fixtures.celery import EngineProcesses
from tests.support.waiting import wait_for


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


def run_ptemplate(
    engine: EngineProcesses, kube: ApiKube, namespace: str, node_selector: dict[str, str]
) -> None:
    """The Ptemplate operator in `namespace`, and a Ptemplate "pt" asking for no device there:
    once a node is selected, nothing else keeps its consumer pod off it."""
    install_kmm_crd(engine.kubeconfig)  # before the watcher, as make run does
    start_operator_in(engine, namespace, "controllers.ptemplate")
    make_secret(kube, namespace)
    kube.create(PTEMPLATE, {
        "apiVersion": PTEMPLATE.api_version, "kind": PTEMPLATE.kind,
        "metadata": {"name": "pt", "namespace": namespace},
        "spec": {**SPEC, "deviceCount": 0, "nodeSelector": node_selector},
    })  # fmt: skip


def page_finding(viewer: Client, page: str, code: str) -> Finding | None:
    """The finding of `code` on the CR page at `page`, once the CR is in the mirror."""
    response = viewer.get(page)
    if response.status_code != 200:  # not in the mirror yet
        return None
    return next((f for f in response.context["diagnosis"].findings if f.code == code), None)


def wait_degraded(kube: ApiKube, kind: Kind, namespace: str, name: str, reason: str) -> Body:
    """The CR's Degraded condition, once it is True for `reason`."""

    def degraded() -> Body | None:
        condition = condition_of(kube.get(kind, namespace, name), "Degraded")
        return condition if condition.get("reason") == reason else None

    found: Body = wait_for(degraded, what=f"the {kind.kind} Degraded, {reason}")
    return found
