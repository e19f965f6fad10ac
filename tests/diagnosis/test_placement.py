"""Pods no node takes because the nodes are cordoned or tainted, diagnosed end to end (real
watcher and worker on kubesim, whose scheduler words it as kube-scheduler v1.28 does; each
test changes nodes, which a shared real cluster cannot lend it; the two that cordon and
taint pass on the rig, run by hand):
the page names the nodes cordoned and tainted with the commands that let the pods on, a
DaemonSet's pods left running under a taint, and a taint the node controller keeps as a
node to make well; once undone, the pods run and the finding goes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from kubernetes import client

from controllers.base import DAEMONSET
from controllers.conditions import condition_of
from controllers.fields import deep_get
from controllers.kube import ApiKube
from controllers.ptemplate.desired import PTEMPLATE
from opsboard.diagnosis.nodes import listed
from opsboard.mirror.models import KubeObject
from tests.diagnosis.memcached_run import (
    create_memcached,
    page_finding,
    run_ptemplate,
    start_operator_in,
)
from tests.fixtures.celery import EngineProcesses
from tests.kubesim.cluster.helpers import set_node_ready
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.kubesim_only, pytest.mark.django_db(transaction=True)]
TAINT = {"key": "example.com/maintenance", "value": "yes", "effect": "NoSchedule"}


@pytest.fixture
def nodes_kept_from_pods(kube_api_client: client.ApiClient) -> Iterator[list[str]]:
    """The first node cordoned, the others tainted; each as it was afterwards."""
    core = client.CoreV1Api(kube_api_client)
    nodes = sorted(n.metadata.name for n in core.list_node().items)
    before: dict[str, Any] = {n: core.read_node(n).spec for n in nodes}
    core.patch_node(nodes[0], {"spec": {"unschedulable": True}})
    for node in nodes[1:]:
        core.patch_node(node, {"spec": {"taints": [*(before[node].taints or []), TAINT]}})
    yield nodes
    for node in nodes:
        spec = before[node]
        taints = [t.to_dict() for t in spec.taints or []]
        core.patch_node(node, {"spec": {"unschedulable": spec.unschedulable, "taints": taints}})


def test_cordoned_and_tainted_nodes_are_named_and_the_pods_run_once_they_are_undone(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client, nodes_kept_from_pods: list[str],
) -> None:  # fmt: skip
    start_operator_in(engine, namespace)
    create_memcached(cluster_kube, namespace, "cache", size=1)
    url = f"/k/memcached/{namespace}/cache/"
    finding = wait_for(
        lambda: page_finding(viewer_client, url, "Unschedulable"), what="the pod unschedulable"
    )
    # Counted from the scheduler's message, named from the mirrored Nodes.
    cordoned, tainted = nodes_kept_from_pods[0], nodes_kept_from_pods[1:]
    assert (
        f"every node is ruled out: 1 node cordoned ({cordoned}), {len(tainted)} nodes tainted "
        f"example.com/maintenance=yes ({listed(tainted)}), which the pods do not tolerate"
        in finding.what
    )
    assert finding.todo == (
        f"On the nodes that should run them: uncordon them (kubectl uncordon {cordoned}; kubectl "
        "get nodes shows them SchedulingDisabled); remove the taint example.com/maintenance=yes "
        f"(kubectl taint nodes {' '.join(tainted)} example.com/maintenance-); or add nodes that "
        "may take them."
    )

    # As the advice says, with the official client: the cordon and the taint undone.
    core = client.CoreV1Api(kube_api_client)
    core.patch_node(nodes_kept_from_pods[0], {"spec": {"unschedulable": False}})
    for node in nodes_kept_from_pods[1:]:
        taints = [t.to_dict() for t in core.read_node(node).spec.taints or []]
        kept = [t for t in taints if t["key"] != TAINT["key"]]
        core.patch_node(node, {"spec": {"taints": kept}})
    crs = KubeObject.objects.filter(kind="Memcached", namespace=namespace, name="cache")
    wait_for(lambda: crs.filter(health="Available").exists(), what="the Memcached available")
    wait_for(
        lambda: page_finding(viewer_client, url, "Unschedulable") is None,
        what="the finding gone from the page",
    )


@pytest.fixture
def first_node(kube_api_client: client.ApiClient) -> Iterator[str]:
    """The first node by name, its taints as they were afterwards."""
    core = client.CoreV1Api(kube_api_client)
    node = sorted(n.metadata.name for n in core.list_node().items)[0]
    before = [t.to_dict() for t in core.read_node(node).spec.taints or []]
    yield node
    core.patch_node(node, {"spec": {"taints": before}})


def _set_taint(core: client.CoreV1Api, node: str, *, on: bool) -> None:
    taints = [t.to_dict() for t in core.read_node(node).spec.taints or []]
    kept = [t for t in taints if t["key"] != TAINT["key"]]
    core.patch_node(node, {"spec": {"taints": [*kept, TAINT] if on else kept}})


def test_a_daemonset_whose_one_node_is_tainted_under_its_pod_names_the_node_and_the_taint(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client, first_node: str,
) -> None:  # fmt: skip
    """Not "no node matches its selector, or each that does is tainted": the mirrored Nodes
    tell which. A NoSchedule taint added under the DaemonSet's pod leaves it running, which
    the page says; once the taint is removed as advised, the DaemonSet counts it again."""
    run_ptemplate(engine, cluster_kube, namespace, {"kubernetes.io/hostname": first_node})

    def placed(wanted: int) -> bool:
        daemonset = cluster_kube.get(DAEMONSET, namespace, "pt-consumer") or {}
        return deep_get(daemonset, "status.desiredNumberScheduled") == wanted and (
            deep_get(daemonset, "status.currentNumberScheduled") == wanted
        )

    wait_for(lambda: placed(1), what="the DaemonSet placing its pod", timeout=120)
    core = client.CoreV1Api(kube_api_client)
    _set_taint(core, first_node, on=True)
    url = f"/k/ptemplate/{namespace}/pt/"
    finding = wait_for(
        lambda: page_finding(viewer_client, url, "NoMatchingNodes"), what="no node selected"
    )
    assert finding.what == (
        f"DaemonSet pt-consumer selects no node now: each node its selector "
        f"kubernetes.io/hostname={first_node} picks ({first_node}) has a taint its pods do not "
        f"tolerate: example.com/maintenance=yes:NoSchedule on {first_node} (0 nodes selected); "
        "1 pod it placed before still runs, and none would replace one that goes."
    )
    assert f"(kubectl taint nodes {first_node} example.com/maintenance-)" in finding.todo

    def told() -> bool:  # the operator's own condition says it too
        cr = cluster_kube.get(PTEMPLATE, namespace, "pt") or {}
        degraded = condition_of(cr, "Degraded")
        return degraded.get("reason") == "NoMatchingNodes" and str(
            degraded.get("message")
        ).endswith(
            "; 1 consumer pod placed before still runs, and none would replace one that goes"
        )

    wait_for(told, what="the Ptemplate saying its consumer still runs")

    _set_taint(core, first_node, on=False)  # as the advice says
    wait_for(lambda: placed(1), what="the DaemonSet counting its pod again", timeout=120)
    wait_for(
        lambda: page_finding(viewer_client, url, "NoMatchingNodes") is None,
        what="the finding gone from the page",
    )


@pytest.fixture
def nodes_stopped(kube_api_client: client.ApiClient) -> Iterator[list[str]]:
    """Every node's kubelet stopped (kubesim's node controller taints them unreachable);
    each reporting again afterwards."""
    nodes = sorted(n.metadata.name for n in client.CoreV1Api(kube_api_client).list_node().items)
    for node in nodes:
        set_node_ready(kube_api_client, node, ready=False)
    yield nodes
    core = client.CoreV1Api(kube_api_client)
    for node in nodes:
        set_node_ready(kube_api_client, node, ready=True)

    def untainted() -> bool:  # before the next test schedules a pod
        taints = [t for n in core.list_node().items for t in n.spec.taints or []]
        return not any(t.key == "node.kubernetes.io/unreachable" for t in taints)

    wait_for(untainted, what="the unreachable taints removed")


def test_nodes_the_node_controller_taints_are_told_to_be_made_well_not_untainted(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client, nodes_stopped: list[str],
) -> None:  # fmt: skip
    """Removing node.kubernetes.io/unreachable by hand would not last: the advice quotes the
    nodes' condition instead, and the pods run once the kubelets report again."""
    start_operator_in(engine, namespace)
    create_memcached(cluster_kube, namespace, "cache", size=1)
    url = f"/k/memcached/{namespace}/cache/"
    finding = wait_for(
        lambda: page_finding(viewer_client, url, "Unschedulable"), what="the pod unschedulable"
    )
    unreachable = "node.kubernetes.io/unreachable"
    assert (
        f"every node is ruled out: {len(nodes_stopped)} nodes tainted {unreachable} "
        f"({listed(nodes_stopped)}), which the pods do not tolerate" in finding.what
    )
    assert "kubectl taint" not in finding.todo
    assert (
        f"make the nodes tainted {unreachable} well again: the node controller keeps that taint "
        f"while its kubelet stopped reporting ({nodes_stopped[0]}: NodeStatusUnknown: Kubelet "
        f"stopped posting node status.), whatever removes it (kubectl describe node "
        f"{' '.join(nodes_stopped)} shows why)" in finding.todo
    )

    for node in nodes_stopped:
        set_node_ready(kube_api_client, node, ready=True)
    crs = KubeObject.objects.filter(kind="Memcached", namespace=namespace, name="cache")
    wait_for(lambda: crs.filter(health="Available").exists(), what="the Memcached available")
