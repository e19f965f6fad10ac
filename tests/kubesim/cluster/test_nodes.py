"""Nodes as the kubelet registers them, and their Lease heartbeats."""

from __future__ import annotations

import pytest
from kubernetes import client

from tests.kubesim.cluster.helpers import condition, wait_for


def test_schedulable_nodes_report_capacity_and_addresses(core):
    nodes = core.list_node().items

    assert nodes
    for node in nodes:
        assert condition(node, "Ready").status == "True"
        assert node.metadata.labels["kubernetes.io/hostname"] == node.metadata.name
        assert node.metadata.labels["kubernetes.io/os"] == "linux"
        assert {"cpu", "memory", "pods"} <= set(node.status.capacity)
        assert {"cpu", "memory", "pods"} <= set(node.status.allocatable)
        assert {a.type for a in node.status.addresses} >= {"InternalIP", "Hostname"}
        assert node.status.node_info.kubelet_version.startswith("v1.")


@pytest.mark.kubesim_only
def test_simulated_nodes_are_numbered_workers_with_pod_cidrs(core):
    names = sorted(n.metadata.name for n in core.list_node().items)

    assert names[:3] == ["kubesim-node-1", "kubesim-node-2", "kubesim-node-3"]
    node = core.read_node("kubesim-node-1")
    assert "node-role.kubernetes.io/worker" in node.metadata.labels
    assert node.spec.pod_cidr == "10.244.1.0/24"
    assert node.status.capacity["pods"] == "110"


def test_every_node_renews_a_lease_in_kube_node_lease(core, kube_api_client):
    coordination = client.CoordinationV1Api(kube_api_client)
    nodes = {n.metadata.name for n in core.list_node().items}

    leases = wait_for(
        lambda: (
            (
                ls := {
                    x.metadata.name: x
                    for x in coordination.list_namespaced_lease("kube-node-lease").items
                }
            )
            and nodes <= set(ls)
            and ls
        ),
        what="a lease per node",
    )

    for name in nodes:
        assert leases[name].spec.holder_identity == name
        assert leases[name].spec.renew_time is not None


@pytest.mark.kubesim_only  # cordoning a node of a shared real cluster is not a test's to do
def test_a_cordoned_node_gets_no_new_pods_and_carries_the_unschedulable_taint(core, namespace):
    node = "kubesim-node-1"
    core.patch_node(node, {"spec": {"unschedulable": True}})
    try:
        taints = wait_for(lambda: core.read_node(node).spec.taints, what="a taint")
        assert [(t.key, t.effect) for t in taints] == [
            ("node.kubernetes.io/unschedulable", "NoSchedule")
        ]
        core.create_namespaced_pod(
            namespace,
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "here"},
                "spec": {
                    "nodeSelector": {"kubernetes.io/hostname": node},
                    "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.9"}],
                },
            },
        )
        cond = wait_for(
            lambda: condition(core.read_namespaced_pod("here", namespace), "PodScheduled"),
            what="PodScheduled",
        )
        assert cond.reason == "Unschedulable"
    finally:
        core.patch_node(node, {"spec": {"unschedulable": None}})
    wait_for(lambda: not core.read_node(node).spec.taints, what="the taint removed")
    wait_for(
        lambda: core.read_namespaced_pod("here", namespace).spec.node_name == node,
        what="scheduled once uncordoned",
    )


@pytest.mark.kubesim_only
def test_a_new_node_posts_the_events_of_a_starting_kubelet(core, kubesim_server):
    name = kubesim_server.cluster.add_node()["metadata"]["name"]
    try:

        def reasons() -> set[str]:
            return {
                e.reason
                for e in core.list_namespaced_event("default").items
                if e.involved_object.name == name
            }

        wait_for(
            lambda: {"Starting", "NodeReady", "RegisteredNode"} <= reasons(), what="node events"
        )
    finally:
        kubesim_server.cluster.remove_node(name)


def _kubectl_node_status(kubectl, node: str) -> str:
    header, row = kubectl("get", "node", node).stdout.splitlines()
    assert header.split()[:2] == ["NAME", "STATUS"]
    return row.split()[1]


@pytest.mark.kubesim_only  # a node of a shared real cluster is not a test's to take down
def test_kubectl_shows_a_node_that_stopped_reporting_as_not_ready(kubesim_server, core, kubectl):
    node = "kubesim-node-2"
    assert _kubectl_node_status(kubectl, node) == "Ready"
    heard = condition(core.read_node(node), "Ready").last_heartbeat_time
    kubesim_server.cluster.set_node_ready(node, False)
    try:
        wait_for(
            lambda: condition(core.read_node(node), "Ready").status == "Unknown",
            what="Ready=Unknown",
        )
        assert _kubectl_node_status(kubectl, node) == "NotReady"
        # The node controller keeps when it last heard from the kubelet (as v1.28's does):
        # the Unknown is no heartbeat of its own.
        ready = condition(core.read_node(node), "Ready")
        assert ready.last_heartbeat_time == heard <= ready.last_transition_time
    finally:
        kubesim_server.cluster.set_node_ready(node, True)
    wait_for(lambda: condition(core.read_node(node), "Ready").status == "True", what="Ready")
    wait_for(lambda: not core.read_node(node).spec.taints, what="the taints removed")
    assert _kubectl_node_status(kubectl, node) == "Ready"


@pytest.mark.kubesim_only  # cordoning a node of a shared real cluster is not a test's to do
def test_kubectl_shows_a_cordoned_node_as_scheduling_disabled(core, kubectl):
    node = "kubesim-node-3"
    kubectl("cordon", node)
    try:
        assert _kubectl_node_status(kubectl, node) == "Ready,SchedulingDisabled"
    finally:
        kubectl("uncordon", node)
    assert _kubectl_node_status(kubectl, node) == "Ready"
    wait_for(lambda: not core.read_node(node).spec.taints, what="the taint removed")
