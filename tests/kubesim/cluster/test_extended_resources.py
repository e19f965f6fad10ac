"""Extended resources (devices): the scheduler fits them, nodes keep what is advertised."""

from __future__ import annotations

import uuid

from kubernetes import client

from kubesim.cluster.nodes import is_extended_resource, node_status
from kubesim.cluster.scheduler import unfit_reason
from tests.kubesim.cluster.helpers import condition, pod, wait_for


def _wants(name: str, resource: str, count: int) -> dict:
    body = pod(name)
    body["spec"]["containers"][0]["resources"] = {
        "requests": {resource: str(count)},
        "limits": {resource: str(count)},
    }
    return body


def _advertise(core: client.CoreV1Api, resource: str, count: int | None) -> None:
    value = None if count is None else str(count)
    for node in core.list_node().items:
        body = {"status": {"capacity": {resource: value}, "allocatable": {resource: value}}}
        core.patch_node_status(node.metadata.name, body)


def test_a_pod_waits_for_a_device_until_a_node_advertises_it(core, namespace):
    resource = f"acme.com/dev-{uuid.uuid4().hex[:6]}"
    core.create_namespaced_pod(namespace, _wants("first", resource, 1))
    cond = wait_for(
        lambda: condition(core.read_namespaced_pod("first", namespace), "PodScheduled"),
        what="PodScheduled",
    )
    assert (cond.status, cond.reason) == ("False", "Unschedulable")
    assert f"Insufficient {resource}" in cond.message
    try:
        nodes = core.list_node().items
        _advertise(core, resource, 1)
        wait_for(lambda: core.read_namespaced_pod("first", namespace).spec.node_name, what="bound")
        # One device per node: one pod more than nodes stays Pending for want of a device.
        for i in range(len(nodes)):
            core.create_namespaced_pod(namespace, _wants(f"more-{i}", resource, 1))
        wait_for(
            lambda: (
                sum(bool(p.spec.node_name) for p in core.list_namespaced_pod(namespace).items)
                == len(nodes)
            ),
            what="every device taken",
        )
        # A pod that goes away frees its device for one that waits.
        core.delete_namespaced_pod("first", namespace, grace_period_seconds=0)
        wait_for(
            lambda: all(
                p.spec.node_name
                for p in core.list_namespaced_pod(namespace).items
                if p.metadata.name != "first"
            ),
            what="the waiting pod bound",
        )
    finally:
        _advertise(core, resource, None)


def test_a_limit_without_a_request_is_the_request(core, namespace):
    resource = f"acme.com/dev-{uuid.uuid4().hex[:6]}"  # advertised by no node
    body = pod("limited")
    body["spec"]["containers"][0]["resources"] = {"limits": {resource: "1"}}
    created = core.create_namespaced_pod(namespace, body)

    assert created.spec.containers[0].resources.requests == {resource: "1"}
    cond = wait_for(
        lambda: condition(core.read_namespaced_pod("limited", namespace), "PodScheduled"),
        what="PodScheduled",
    )
    assert (cond.status, cond.reason) == ("False", "Unschedulable")
    assert f"Insufficient {resource}" in cond.message


def test_unit_extended_resource_rules() -> None:
    assert is_extended_resource("acme.com/dev")
    assert not is_extended_resource("cpu")
    assert not is_extended_resource("kubernetes.io/dev")
    node = {"metadata": {"name": "kubesim-node-1"}, "status": {"capacity": {"acme.com/a": "2"}}}
    status = node_status(node, ready=True, extended={"acme.com/b": "1"})
    assert status["capacity"]["acme.com/a"] == "2"  # advertised through the API: kept
    assert status["allocatable"]["acme.com/b"] == "1"  # configured
    wants = _wants("x", "acme.com/a", 3)
    assert unfit_reason(wants, {"metadata": node["metadata"], "status": status}, 0, []) == (
        "Insufficient acme.com/a"
    )
