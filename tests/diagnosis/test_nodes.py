"""The mirrored Nodes name those that keep pods off: cordoned, tainted, unlabelled (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from opsboard.diagnosis import nodes
from opsboard.diagnosis.findings import diagnose
from opsboard.diagnosis.observed import Observed
from tests.diagnosis.test_findings import KEPT_OFF, LIVE, NOW, _consumer_pod, _cr

MAINTENANCE = {"key": "example.com/maintenance", "value": "yes", "effect": "NoSchedule"}
ACCEL = {"hwe.example.com/accel": "yes"}


def _node(name: str, *taints: dict[str, str], cordoned: bool = False, **labels: str) -> Any:
    spec: dict[str, Any] = {"taints": list(taints)} if taints else {}
    if cordoned:
        spec["unschedulable"] = True
    return {"kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": spec}


@pytest.mark.parametrize(
    ("toleration", "tolerated"),
    [
        ({"key": "example.com/maintenance", "operator": "Equal", "value": "yes"}, True),
        ({"key": "example.com/maintenance", "value": "yes"}, True),  # Equal by default
        ({"key": "example.com/maintenance", "value": "no"}, False),
        ({"key": "example.com/maintenance", "operator": "Exists"}, True),
        ({"operator": "Exists"}, True),  # every taint
        ({"operator": "Exists", "effect": "NoExecute"}, False),  # another effect
        ({"key": "other", "operator": "Exists"}, False),
    ],
)
def test_a_toleration_is_matched_as_kubernetes_matches_it(
    toleration: dict[str, str], tolerated: bool
) -> None:
    assert nodes.tolerates(toleration, MAINTENANCE) is tolerated


def test_a_pod_is_kept_off_by_cordons_and_untolerated_taints_of_the_nodes_it_selects() -> None:
    cluster = [
        _node("a", cordoned=True, **{"hwe.example.com/accel": "yes"}),
        _node("b", MAINTENANCE, **{"hwe.example.com/accel": "yes"}),
        _node(
            "c", {"key": "soft", "effect": "PreferNoSchedule"}, **{"hwe.example.com/accel": "yes"}
        ),
        _node("d", MAINTENANCE),  # not selected: its taint is not the pod's concern
    ]
    pod = {"spec": {"nodeSelector": ACCEL}}
    off = nodes.keeping_off(cluster, pod)
    assert off.candidates == ["a", "b", "c"]
    assert off.cordoned == ["a"]
    assert off.tainted == {"example.com/maintenance=yes:NoSchedule": ["b"]}
    assert off.keys == {"example.com/maintenance=yes:NoSchedule": "example.com/maintenance"}
    pod["spec"]["tolerations"] = [{"key": "example.com/maintenance", "operator": "Exists"}]
    assert nodes.keeping_off(cluster, pod).tainted == {}
    # A DaemonSet's pods tolerate the cordon, and a node that is not ready.
    not_ready = {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}
    off = nodes.keeping_off([_node("a", not_ready, cordoned=True, **ACCEL)], pod, daemon=True)
    assert (off.candidates, off.cordoned, off.tainted) == (["a"], [], {})


def test_names_are_listed_whole_up_to_five_and_commands_fall_back_to_node_past_them() -> None:
    assert nodes.listed(["a"]) == "a"
    assert nodes.listed(["a", "b", "c"]) == "a, b and c"
    six = [f"n{i}" for i in range(6)]
    assert nodes.listed(six) == "n0, n1, n2, n3, n4 and 1 more"
    assert nodes.named(six[:5]) == "n0 n1 n2 n3 n4"
    assert nodes.named(six) == "NODE"


def test_an_unschedulable_pod_names_the_nodes_cordoned_and_tainted_in_the_commands() -> None:
    cluster = [_node("rig-node-1", cordoned=True, **ACCEL), _node("rig-node-2", MAINTENANCE, **ACCEL),
               _node("rig-node-3", MAINTENANCE, **ACCEL)]  # fmt: skip
    observed = Observed(
        _cr(), objects=[_consumer_pod(KEPT_OFF)], nodes=cluster, engine=LIVE, now=NOW
    )
    [finding] = diagnose(observed)
    assert (
        "every node is ruled out: 1 node cordoned (rig-node-1), 2 nodes tainted "
        "example.com/maintenance=yes (rig-node-2 and rig-node-3), which the pods do not tolerate"
        in finding.what
    )
    assert finding.todo == (
        "On the nodes that should run them: uncordon them (kubectl uncordon rig-node-1; kubectl "
        "get nodes shows them SchedulingDisabled); remove the taint example.com/maintenance=yes "
        "(kubectl taint nodes rig-node-2 rig-node-3 example.com/maintenance-); or add nodes that "
        "may take them."
    )
    # Nodes the mirror does not have (not allowed to list them, or undone since): NODE.
    [finding] = diagnose(Observed(_cr(), objects=[_consumer_pod(KEPT_OFF)], nodes=[], engine=LIVE,
                                  now=NOW))  # fmt: skip
    assert "(kubectl uncordon NODE;" in finding.todo and "1 node cordoned, 2" in finding.what


def _daemonset(selector: dict[str, str]) -> dict[str, Any]:
    return {
        "kind": "DaemonSet",
        "metadata": {"name": "pt-consumer", "generation": 1},
        "spec": {"template": {"spec": {"nodeSelector": selector}}},
        "status": {"observedGeneration": 1, "desiredNumberScheduled": 0},
    }


def _daemonset_finding(cluster: list[Any] | None, selector: dict[str, str] = ACCEL) -> Any:
    [finding] = diagnose(Observed(_cr(), objects=[_daemonset(selector)], nodes=cluster,
                                  engine=LIVE, now=NOW))  # fmt: skip
    assert finding.code == "NoMatchingNodes"
    return finding


def test_a_daemonset_selecting_no_node_is_told_apart_from_one_whose_nodes_are_tainted() -> None:
    finding = _daemonset_finding([_node("a"), _node("b", MAINTENANCE)])
    assert finding.what == (
        "DaemonSet pt-consumer runs no pod: no node has the labels hwe.example.com/accel=yes "
        "(2 nodes in all) (0 nodes selected)."
    )
    assert finding.todo == (
        "Label the nodes that should run it (kubectl label node NODE hwe.example.com/accel=yes), "
        "or change the CR's node selector."
    )
    cordoned_too = _node("b", MAINTENANCE, cordoned=True, **ACCEL)  # the cordon does not count
    finding = _daemonset_finding([_node("a", MAINTENANCE, **ACCEL), cordoned_too, _node("c")])
    assert finding.what == (
        "DaemonSet pt-consumer runs no pod: each node its selector hwe.example.com/accel=yes "
        "picks (a and b) has a taint its pods do not tolerate: "
        "example.com/maintenance=yes:NoSchedule on a and b (0 nodes selected)."
    )
    assert finding.todo == (
        "On the nodes that should run it: remove the taint example.com/maintenance=yes:NoSchedule "
        "(kubectl taint nodes a b example.com/maintenance-); or pick other nodes with the CR's node "
        "selector."
    )
    finding = _daemonset_finding([_node("a", MAINTENANCE)], selector={})
    assert "each node (a) has a taint" in finding.what and "change" not in finding.todo
    assert _daemonset_finding([]).what.endswith(
        "runs no pod: the cluster has no node (0 nodes selected)."
    )


def test_a_daemonset_finding_says_both_causes_when_the_nodes_cannot_tell() -> None:
    both = ", or each one that does has a taint its pods do not tolerate"
    assert both in _daemonset_finding(None).what  # the Nodes not mirrored
    [limited] = diagnose(Observed(_cr(), objects=[_daemonset(ACCEL)], engine=LIVE, now=NOW,
                                  node_rights=False))  # fmt: skip
    assert limited.todo.startswith("Label the nodes that should run it (kubectl label node")
    assert limited.todo.endswith("ask a cluster administrator to take the steps on them.")
    # A node would take its pods now: the controller's count is older than the mirror's.
    assert both in _daemonset_finding([_node("a", **ACCEL)]).what


def _accel_node(name: str, amount: str | None) -> Any:
    node = _node(name, **ACCEL)
    node["status"] = {
        "allocatable": {"cpu": "4", **({"example.com/accel": amount} if amount else {})}
    }
    return node


def test_a_pod_short_of_a_device_says_what_each_node_it_may_run_on_can_allocate() -> None:
    message = ("0/3 nodes are available: 2 Insufficient example.com/accel, 1 node(s) didn't "
               "match Pod's node affinity/selector.")  # fmt: skip
    cluster = [_accel_node("a", "2"), _accel_node("b", "2"), _node("c")]
    [finding] = diagnose(Observed(_cr(), objects=[_consumer_pod(message)], nodes=cluster,
                                  engine=LIVE, now=NOW))  # fmt: skip
    assert (
        "each pod requests 3 example.com/accel, more than the 2 node(s) it may run on have free "
        "(a can allocate 2 example.com/accel; b can allocate 2 example.com/accel)" in finding.what
    )
    assert finding.todo.endswith(
        "or add example.com/accel to the nodes it may run on (is its device plugin running there?)."
    )
    # A DaemonSet's pod is pinned to one node (a required affinity on metadata.name): only
    # that node is told.
    pinned = _consumer_pod(message)
    pinned["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}}  # fmt: skip
    [finding] = diagnose(Observed(_cr(), objects=[pinned], nodes=cluster, engine=LIVE, now=NOW))
    assert "have free (b can allocate 2 example.com/accel), e.g." in finding.what
    # No node reports the device at all: its plugin is the cause.
    cluster = [_accel_node("a", None), _accel_node("b", "0"), _node("c")]
    [finding] = diagnose(Observed(_cr(), objects=[_consumer_pod(message)], nodes=cluster,
                                  engine=LIVE, now=NOW))  # fmt: skip
    assert "(none of a and b offers any example.com/accel)" in finding.what
    assert finding.todo.endswith(
        "or run the device plugin that registers example.com/accel on the nodes it may run on."
    )


def test_a_daemonset_whose_pods_outlive_a_taint_says_they_still_run() -> None:
    """A NoSchedule taint evicts nothing: the DaemonSet wants no pod, counts its running
    one misscheduled (as kube-controller-manager v1.28 did on the rig), and would not
    replace it."""
    daemonset = _daemonset(ACCEL)
    daemonset["status"]["numberMisscheduled"] = 1
    [finding] = diagnose(Observed(_cr(), objects=[daemonset], nodes=[_node("a", MAINTENANCE, **ACCEL)],
                                  engine=LIVE, now=NOW))  # fmt: skip
    assert finding.what == (
        "DaemonSet pt-consumer selects no node now: each node its selector "
        "hwe.example.com/accel=yes picks (a) has a taint its pods do not tolerate: "
        "example.com/maintenance=yes:NoSchedule on a (0 nodes selected); 1 pod it placed before "
        "still runs, and none would replace one that goes."
    )


UNREACHABLE = "node.kubernetes.io/unreachable"
STOPPED = {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
           "message": "Kubelet stopped posting node status."}  # fmt: skip


def test_a_taint_the_node_controller_keeps_says_to_fix_the_node_not_to_remove_it() -> None:
    """Removed by hand, node.kubernetes.io/unreachable is back within seconds: the advice
    is the node's condition, quoted from the mirror."""
    node = _node("n1", {"key": UNREACHABLE, "effect": "NoSchedule"}, **ACCEL)
    node["status"] = {"conditions": [STOPPED]}
    message = (f"0/3 nodes are available: 1 node(s) had untolerated taint {{{UNREACHABLE}: }}, "
               "2 node(s) didn't match Pod's node affinity/selector.")  # fmt: skip
    [finding] = diagnose(Observed(_cr(), objects=[_consumer_pod(message)], nodes=[node],
                                  engine=LIVE, now=NOW))  # fmt: skip
    assert f"1 node tainted {UNREACHABLE} (n1), which the pods do not tolerate" in finding.what
    assert "kubectl taint" not in finding.todo
    assert finding.todo == (
        f"On the nodes that should run them: make the node tainted {UNREACHABLE} well again: "
        "the node controller keeps that taint while its kubelet stopped reporting (n1: "
        "NodeStatusUnknown: Kubelet stopped posting node status.), whatever removes it (kubectl "
        "describe node n1 shows why); or add nodes that may take them."
    )
    # A DaemonSet's pods tolerate its NoExecute twin only: the NoSchedule one keeps them off.
    node["spec"]["taints"].append({"key": UNREACHABLE, "effect": "NoExecute"})
    finding = _daemonset_finding([node])
    assert f"{UNREACHABLE}:NoSchedule on n1" in finding.what
    assert f"{UNREACHABLE}:NoExecute" not in finding.what
    assert "make the node tainted" in finding.todo and "kubectl taint" not in finding.todo
