"""`python -m bench --kubeconfig FILE`: the scenarios that need no kubesim hook run on a
cluster the bench did not start (this suite's kubesim, or the real cluster given by
OPSBOARD_TEST_KUBECONFIG), opsboard, the kopf peer and the floor side by side, each in a
namespace of its own that is gone afterwards. Figures are checked for shape only."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from kubernetes import client

from bench.kube import KubeApi
from tests.fixtures.kubesim import KubesimHandle

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT = 600

pytestmark = pytest.mark.timeout(RUN_TIMEOUT + 60)


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"KUBECONFIG", "REDIS_URL"}}
    return subprocess.run(
        [sys.executable, "-m", "bench", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )


def test_patch_and_cost_run_on_the_given_cluster_beside_kopf_and_the_floor(
    kubesim_server: KubesimHandle, kube_api_client: client.ApiClient, tmp_path: Path
) -> None:
    kubeconfig = str(kubesim_server.kubeconfig_path)
    run = _bench("--quick", "--kubeconfig", kubeconfig, "--out", str(tmp_path), "patch", "cost")
    assert run.returncode == 0, run.stderr[-6000:]
    document = json.loads((tmp_path / "results.json").read_text())
    assert list(document["scenarios"]) == ["patch", "cost"]
    patch: dict[str, Any] = document["scenarios"]["patch"]
    assert patch["error"] is None, patch["data"].get("traceback")
    assert patch["data"]["server"] == "a real cluster"
    figures = patch["data"]["figures"]
    for operator in ("opsboard", "kopf", "floor"):
        assert figures[operator]["spec"]["n"] > 0, (operator, figures[operator])
        assert figures[operator]["ready"]["n"] > 0, (operator, figures[operator])
    assert "on a real cluster" in patch["title"] and "[patch]" in run.stdout

    # The server counts each operator's own requests where it serves API Priority and
    # Fairness (a real one; kubesim does not): every size change writes the Deployment.
    cost: dict[str, Any] = document["scenarios"]["cost"]
    assert cost["error"] is None, cost["data"].get("traceback")
    flowcontrol = _flowcontrol_version(kube_api_client)
    counted = flowcontrol is not None
    for operator in ("opsboard", "kopf"):
        size_writes = cost["data"]["figures"][operator]["size_writes"]
        assert (size_writes is not None and size_writes >= 1) if counted else size_writes is None
    assert any(("the API server's own count" if counted else "not counted") in note
               for note in cost["notes"]), cost["notes"]  # fmt: skip

    # Every namespace the run made is deleted (some may still be terminating), and what it
    # made outside them.
    left = [
        ns
        for ns in client.CoreV1Api(kube_api_client).list_namespace().items
        if ns.metadata.name.startswith(("bench-patch-", "bench-cost-"))
        and ns.metadata.deletion_timestamp is None
    ]
    assert left == []
    bindings = client.RbacAuthorizationV1Api(kube_api_client).list_cluster_role_binding()
    assert [b.metadata.name for b in bindings.items if b.metadata.name.startswith("bench-")] == []
    if flowcontrol is not None:
        schemas = KubeApi(kubesim_server.kubeconfig_path).request(
            "GET", f"/apis/{flowcontrol}/flowschemas"
        )["items"]
        assert [s["metadata"]["name"] for s in schemas
                if s["metadata"]["name"].startswith("bench-")] == []  # fmt: skip


def _flowcontrol_version(api_client: client.ApiClient) -> str | None:
    """The server's preferred API Priority and Fairness version, if it serves one."""
    for group in client.ApisApi(api_client).get_api_versions().groups:
        if group.name == "flowcontrol.apiserver.k8s.io":
            return str(group.preferred_version.group_version)
    return None


def test_a_scenario_that_needs_kubesim_is_refused_with_the_reason(
    kubesim_server: KubesimHandle,
) -> None:
    run = _bench("--kubeconfig", str(kubesim_server.kubeconfig_path), "heal")
    assert run.returncode == 2
    assert "heal need kubesim's hooks and cannot run with --kubeconfig" in run.stderr
    missing = _bench("--kubeconfig", "/nonexistent/kubeconfig")
    assert missing.returncode == 2 and "/nonexistent/kubeconfig: no such file" in missing.stderr


def test_a_cluster_without_room_for_the_pods_asked_is_told_at_once(
    kubesim_server: KubesimHandle, kube_api_client: client.ApiClient, tmp_path: Path
) -> None:
    # A cluster too small for the fleet asked for (the rig's three nodes take 330 pods)
    # gets the figures and what to do, not a wait that times out.
    kubeconfig = str(kubesim_server.kubeconfig_path)

    def told() -> dict[str, Any]:
        run = _bench("--quick", "--kubeconfig", kubeconfig, "--crs", "100000", "--out",
                     str(tmp_path), "coldstart", "idle", "ui")  # fmt: skip
        # Told, and the exit status says so: a script or CI sees the run measured nothing.
        assert run.returncode == 1, run.stderr[-6000:]
        assert "not measured: coldstart, idle, ui (the table" in run.stderr
        scenarios: dict[str, Any] = json.loads((tmp_path / "results.json").read_text())
        return scenarios["scenarios"]

    scenarios, pod_room = _while_pods_stay(kube_api_client, told)
    room = r"the cluster has room for (\d+) more pods \(.*\) and this scenario needs "
    cold, idle = (
        re.fullmatch(
            room + r"100001: one for each of its 100000 CRs and a warm-up \(give a smaller --crs\)",
            scenarios[name]["error"] or "",
        )
        for name in ("coldstart", "idle")
    )
    ui = re.fullmatch(
        room + r"100011: 10 for the detail page's CR, one for each of the 100001 CRs of its "
        r"fleet .*",
        scenarios["ui"]["error"] or "",
    )
    assert cold and idle and ui, {name: scenario["error"] for name, scenario in scenarios.items()}
    assert int(cold[1]) == int(idle[1]) == int(ui[1]) == pod_room


def test_pod_room_is_the_nodes_pods_less_those_running_on_them(
    kubesim_server: KubesimHandle, kube_api_client: client.ApiClient
) -> None:
    api = KubeApi(kubesim_server.kubeconfig_path)
    ours, theirs = _while_pods_stay(kube_api_client, api.pod_room)
    assert ours == theirs


def _while_pods_stay(api_client: client.ApiClient, measure: Callable[[], T]) -> tuple[T, int]:
    """`measure()`, and the cluster's pod room (_pod_room) the same just before and after it:
    other tests sharing a real cluster create and delete pods meanwhile. Five tries."""
    for _ in range(5):
        before = _pod_room(api_client)
        value = measure()
        if _pod_room(api_client) == before:
            return value, before
    pytest.fail("the cluster's pods changed during each of five tries: too busy to compare")


def _pod_room(api_client: client.ApiClient) -> int:
    """The same figure through the official client's typed models."""
    core = client.CoreV1Api(api_client)
    nodes = [
        node
        for node in core.list_node().items
        if not node.spec.unschedulable
        and any(c.type == "Ready" and c.status == "True" for c in node.status.conditions)
    ]
    names = {node.metadata.name for node in nodes}
    pods = core.list_pod_for_all_namespaces().items
    running = [
        pod
        for pod in pods
        if pod.status.phase not in ("Succeeded", "Failed")
        and (pod.spec.node_name or "") in names | {""}
    ]
    return sum(int(node.status.allocatable["pods"]) for node in nodes) - len(running)
