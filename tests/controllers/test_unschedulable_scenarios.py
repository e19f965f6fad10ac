"""Pods that wait for a node, end to end: Progressing within the grace, Degraded past it
with no event to tell (the reconcile runs again when the grace ends), well once placed.

kubesim only: no node takes the pods while every node carries this test's NoSchedule
taint, and a real cluster's nodes are shared with other runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from controllers.conditions import condition_of
from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from tests.fixtures.celery import EngineProcesses
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.kubesim_only]

TAINT = "opsboard.test/unschedulable"
GRACE = 10  # seconds: short for the test, long enough to see the CR wait first


@pytest.fixture
def engine_with_grace(engine: EngineProcesses, operator_crds: None) -> EngineProcesses:
    engine.extra_env["OPSBOARD_UNSCHEDULABLE_GRACE_SECONDS"] = str(GRACE)
    worker = engine.start_worker(concurrency=2, wait=False)
    engine.start_watcher()
    engine.wait_worker_ready(worker)
    return engine


def _set_taint(core: client.CoreV1Api, *, on: bool) -> None:
    """This test's NoSchedule taint on every node (on) or off them, others' kept."""
    for node in core.list_node().items:
        kept = [t.to_dict() for t in node.spec.taints or [] if t.key != TAINT]
        ours = [{"key": TAINT, "effect": "NoSchedule"}] if on else []
        core.patch_node(node.metadata.name, {"spec": {"taints": kept + ours}})


@pytest.fixture
def full_nodes(kube_api_client: Any) -> Iterator[client.CoreV1Api]:
    core = client.CoreV1Api(kube_api_client)
    _set_taint(core, on=True)
    try:
        yield core
    finally:
        _set_taint(core, on=False)


def test_a_pod_no_node_takes_is_progressing_then_degraded_once_its_grace_ends(
    engine_with_grace: EngineProcesses,
    kube: ApiKube,
    namespace: str,
    full_nodes: client.CoreV1Api,
) -> None:
    body = {
        "apiVersion": MEMCACHED.api_version,
        "kind": MEMCACHED.kind,
        "metadata": {"name": "m", "namespace": namespace},
        "spec": {"size": 1},
    }
    kube.create(MEMCACHED, body)

    def waiting() -> dict[str, Any] | None:
        cr = kube.get(MEMCACHED, namespace, "m")
        progressing = condition_of(cr, "Progressing")
        told = "1 pod waits to be scheduled" in str(progressing.get("message"))
        return cr if told and condition_of(cr, "Degraded").get("status") == "False" else None

    cr = wait_for(waiting, what="Progressing, waiting for the pod to be scheduled")
    assert "untolerated taint" in condition_of(cr, "Progressing")["message"]

    # Nothing changes in the cluster from here: only the requeue at the grace's end tells.
    def degraded() -> dict[str, Any]:
        return condition_of(kube.get(MEMCACHED, namespace, "m"), "Degraded")

    condition = wait_for(lambda: degraded().get("status") == "True" and degraded(),
                         what="Degraded once the grace is over")  # fmt: skip
    assert condition["reason"] == "PodsUnschedulable"
    assert condition["message"].startswith("1 pod cannot be scheduled, e.g. m-")

    _set_taint(full_nodes, on=False)
    wait_for(
        lambda: (
            condition_of(kube.get(MEMCACHED, namespace, "m"), "Available").get("status") == "True"
            and degraded().get("status") == "False"
        ),
        what="Available and no longer Degraded once a node takes the pod",
    )
