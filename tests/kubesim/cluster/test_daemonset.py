"""The DaemonSet controller: one pod per matching node."""

from __future__ import annotations

import uuid

import pytest

from kubesim.cluster.daemonset_update import Limits, limits, plan
from tests.kubesim.cluster.helpers import (
    condition,
    daemonset,
    events_for,
    is_ready,
    pods_of,
    schedulable_nodes,
    wait_for,
)


def test_one_ready_pod_on_every_node(apps, core, namespace):
    nodes = {n.metadata.name for n in schedulable_nodes(core)}
    apps.create_namespaced_daemon_set(namespace, daemonset("agent"))

    def status():
        s = apps.read_namespaced_daemon_set("agent", namespace).status
        return s if s.number_ready == len(nodes) and s.observed_generation else None

    s = wait_for(status, what="a ready pod per node")

    assert (s.desired_number_scheduled, s.current_number_scheduled) == (len(nodes), len(nodes))
    assert (s.updated_number_scheduled, s.number_available, s.number_misscheduled) == (
        len(nodes),
        len(nodes),
        0,
    )
    pods = core.list_namespaced_pod(namespace, label_selector="app=agent").items
    assert sorted(p.spec.node_name for p in pods) == sorted(nodes)


def test_node_selector_limits_the_nodes(apps, core, namespace):
    node = schedulable_nodes(core)[0].metadata.name
    apps.create_namespaced_daemon_set(
        namespace, daemonset("one", nodeSelector={"kubernetes.io/hostname": node})
    )

    s = wait_for(
        lambda: (
            (s := apps.read_namespaced_daemon_set("one", namespace).status).number_ready == 1 and s
        ),
        what="one ready pod",
    )

    assert s.desired_number_scheduled == 1
    [p] = core.list_namespaced_pod(namespace, label_selector="app=one").items
    assert p.spec.node_name == node


def test_a_template_change_replaces_the_pods(apps, core, namespace):
    nodes = len(schedulable_nodes(core))
    apps.create_namespaced_daemon_set(namespace, daemonset("roll"))
    wait_for(
        lambda: apps.read_namespaced_daemon_set("roll", namespace).status.number_ready == nodes,
        what="ready",
    )

    patch = {
        "spec": {"template": {"spec": {"containers": [{"name": "agent", "image": "busybox:1.37"}]}}}
    }
    apps.patch_namespaced_daemon_set("roll", namespace, patch)

    def updated() -> bool:
        ds = apps.read_namespaced_daemon_set("roll", namespace)
        s = ds.status
        pods = core.list_namespaced_pod(namespace, label_selector="app=roll").items
        images = {p.spec.containers[0].image for p in pods}
        return (
            s.observed_generation == ds.metadata.generation
            and s.updated_number_scheduled == nodes
            and s.number_ready == nodes
            and images == {"busybox:1.37"}
        )

    wait_for(updated, what="every daemon pod updated")


def test_the_template_generation_counts_changes_of_the_pod_template_only(apps, core, namespace):
    """apps/v1 shows it in an annotation, and the controller labels each pod with it."""
    key = "deprecated.daemonset.template.generation"
    nodes = len(schedulable_nodes(core))
    apps.create_namespaced_daemon_set(namespace, daemonset("gen"))

    def labels(generation: str) -> bool:
        pods = core.list_namespaced_pod(namespace, label_selector="app=gen").items
        return len(pods) == nodes and all(
            p.metadata.labels["pod-template-generation"] == generation for p in pods
        )

    wait_for(lambda: labels("1"), what="a pod per node, template generation 1")
    strategy = {"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 2}}}}
    ds = apps.patch_namespaced_daemon_set("gen", namespace, strategy)
    assert (ds.metadata.generation, ds.metadata.annotations[key]) == (2, "1")
    forged = {"metadata": {"annotations": {key: "7"}}}  # not the client's to set
    assert (
        apps.patch_namespaced_daemon_set("gen", namespace, forged).metadata.annotations[key] == "1"
    )

    image = {"containers": [{"name": "agent", "image": "busybox:1.37"}]}
    ds = apps.patch_namespaced_daemon_set("gen", namespace, {"spec": {"template": {"spec": image}}})
    assert (ds.metadata.generation, ds.metadata.annotations[key]) == (3, "2")
    wait_for(lambda: labels("2"), what="every pod replaced, template generation 2")


def _ready_names(core, namespace: str, selector: str) -> set[str]:
    return {p.metadata.name for p in pods_of(core, namespace, selector) if is_ready(p)}


@pytest.mark.parametrize(
    "rolling",
    [{"maxUnavailable": 1}, {"maxSurge": 1, "maxUnavailable": 0}],
    ids=["max-unavailable", "max-surge"],
)
def test_pending_pods_are_replaced_when_the_template_is_fixed(apps, core, namespace, rolling):
    nodes = len(schedulable_nodes(core))
    device = f"acme.com/missing-{uuid.uuid4().hex[:6]}"  # advertised by no node
    body = daemonset("stuck")
    body["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": rolling}
    body["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {device: "5"},
        "limits": {device: "5"},
    }
    apps.create_namespaced_daemon_set(namespace, body)

    def unschedulable() -> list:
        pods = pods_of(core, namespace, "app=stuck")
        conds = [condition(p, "PodScheduled") for p in pods]
        stuck = [c for c in conds if c and (c.status, c.reason) == ("False", "Unschedulable")]
        return pods if len(pods) == nodes and len(stuck) == nodes else []

    old = {p.metadata.name for p in wait_for(unschedulable, what="a Pending pod per node")}

    def counted():  # every Pending pod counted as scheduled (on its target node), none up
        s = apps.read_namespaced_daemon_set("stuck", namespace).status
        return s if (s.current_number_scheduled, s.number_unavailable) == (nodes, nodes) else None

    s = wait_for(counted, what="every daemon pod counted, and counted unavailable")
    assert s.desired_number_scheduled == nodes
    assert (s.updated_number_scheduled, s.number_ready, s.number_available) == (nodes, 0, None)

    # The fix: no device wanted. Old pods that were never available hold nothing up.
    fix = [{"op": "remove", "path": "/spec/template/spec/containers/0/resources"}]
    apps.patch_namespaced_daemon_set("stuck", namespace, fix)

    def replaced() -> bool:
        ds = apps.read_namespaced_daemon_set("stuck", namespace)
        s = ds.status
        pods = pods_of(core, namespace, "app=stuck")
        return (
            s.observed_generation == ds.metadata.generation
            and (s.updated_number_scheduled, s.number_available) == (nodes, nodes)
            and s.number_unavailable is None
            and len(_ready_names(core, namespace, "app=stuck")) == nodes
            and not old & {p.metadata.name for p in pods}
            and all(not p.spec.containers[0].resources.requests for p in pods)
        )

    # A real DaemonSet controller replaces them a node or two at a time, each waiting for the
    # last to be ready: past a minute on the rig's two busy cores in the full suite.
    wait_for(replaced, what="the Pending pods replaced by ready ones", timeout=180)
    s = apps.read_namespaced_daemon_set("stuck", namespace).status
    assert (s.current_number_scheduled, s.number_ready, s.number_misscheduled) == (nodes, nodes, 0)


def test_unit_unavailable_old_pods_go_at_once_available_ones_within_max_unavailable() -> None:
    def daemon(name: str, revision: str, *, ready: bool) -> dict:
        return {
            "metadata": {"name": name, "labels": {"controller-revision-hash": revision}},
            "spec": {"nodeName": name},
            "status": {"conditions": [{"type": "Ready", "status": str(ready)}]},
        }

    by_node = {
        "a": [daemon("a", "old", ready=False)],
        "b": [daemon("b", "old", ready=False)],
        "c": [daemon("c", "old", ready=True)],
        "d": [daemon("d", "old", ready=True)],
        "e": [daemon("e", "new", ready=True)],
    }
    one = plan(by_node, set(by_node), "new", Limits(max_surge=0, max_unavailable=1), 0)
    assert [p["metadata"]["name"] for p in one.delete] == ["a", "b", "c"]
    assert one.create_on == ()

    by_node["e"] = [daemon("e", "new", ready=False)]  # a new pod not yet up uses the budget
    busy = plan(by_node, set(by_node), "new", Limits(max_surge=0, max_unavailable=1), 0)
    assert [p["metadata"]["name"] for p in busy.delete] == ["a", "b"]

    surge = plan(by_node, set(by_node), "new", Limits(max_surge=1, max_unavailable=0), 0)
    assert (surge.delete, surge.create_on) == ((), ("a", "b", "c"))


def test_unit_percentages_round_up_and_surge_needs_no_unavailability() -> None:
    def ds(**rolling: object) -> dict:
        strategy = {"type": "RollingUpdate", "rollingUpdate": rolling}
        return {"spec": {"updateStrategy": strategy}}

    assert limits(ds(maxUnavailable="30%", maxSurge=0), 5) == Limits(0, 2)
    assert limits(ds(maxUnavailable=0, maxSurge="10%"), 5) == Limits(1, 0)
    assert limits(ds(maxUnavailable=0, maxSurge=0), 5) == Limits(0, 1)
    assert limits({"spec": {"updateStrategy": {"type": "OnDelete"}}}, 5) is None


def _set_taints(core, node: str, taints: list[dict]) -> None:
    """Replaces the node's taints whose key is this test's, keeping the others."""
    kept = [t.to_dict() for t in core.read_node(node).spec.taints or [] if t.key != TEST_TAINT]
    core.patch_node(node, {"spec": {"taints": kept + taints}})


TEST_TAINT = "opsboard.test/daemonset"


def test_a_no_schedule_taint_keeps_the_running_pod_a_no_execute_one_removes_it(
    apps, core, namespace
):
    node = schedulable_nodes(core)[0].metadata.name
    apps.create_namespaced_daemon_set(
        namespace, daemonset("kept", nodeSelector={"kubernetes.io/hostname": node})
    )
    [running] = wait_for(
        lambda: [p for p in pods_of(core, namespace, "app=kept") if is_ready(p)],
        what="the pod ready",
    )
    try:
        _set_taints(core, node, [{"key": TEST_TAINT, "effect": "NoSchedule"}])

        def misscheduled():
            s = apps.read_namespaced_daemon_set("kept", namespace).status
            return s.number_misscheduled == 1 and s

        status = wait_for(misscheduled, what="the pod counted as misscheduled")
        assert (status.desired_number_scheduled, status.current_number_scheduled) == (0, 0)
        [still] = pods_of(core, namespace, "app=kept")
        assert still.metadata.uid == running.metadata.uid
        assert still.metadata.deletion_timestamp is None

        _set_taints(core, node, [{"key": TEST_TAINT, "effect": "NoExecute"}])
        wait_for(
            lambda: (
                not [
                    p
                    for p in pods_of(core, namespace, "app=kept")
                    if not p.metadata.deletion_timestamp
                ]
            ),
            what="the pod deleted",
        )
    finally:
        _set_taints(core, node, [])


@pytest.mark.kubesim_only
def test_a_failed_daemon_pod_is_told_deleted_and_replaced(apps, core, namespace, kubesim_server):
    """A daemon pod its kubelet evicts or rejects (Failed) is deleted, with a Warning, and
    a new one takes its node (kubesim's fail_pod: a real cluster needs its kubelet)."""
    node = schedulable_nodes(core)[0].metadata.name
    apps.create_namespaced_daemon_set(
        namespace, daemonset("mended", nodeSelector={"kubernetes.io/hostname": node})
    )
    [failed] = wait_for(
        lambda: [p for p in pods_of(core, namespace, "app=mended") if is_ready(p)],
        what="the pod ready",
    )
    name = failed.metadata.name
    kubesim_server.cluster.fail_pod(namespace, name)

    def replaced():
        pods = pods_of(core, namespace, "app=mended")
        return [p for p in pods if p.metadata.name != name and is_ready(p)]

    wait_for(replaced, what="a new ready pod in its place")
    [told] = [e for e in events_for(core, namespace, "mended") if e.reason == "FailedDaemonPod"]
    assert told.type == "Warning"
    assert told.message == (
        f"Found failed daemon pod {namespace}/{name} on node {node}, will try to kill it"
    )
