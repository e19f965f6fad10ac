"""The built install applies cleanly to the API server with a server-side dry run.

Against kubesim by default, or the cluster of OPSBOARD_TEST_KUBECONFIG: the same test."""

from __future__ import annotations

import subprocess
from typing import Any

import yaml
from kubernetes import client

from tests.deploy.kustomize import KUBECTL, Manifest


def _dry_run(kubesim_server: Any, docs: list[Manifest]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubesim_server.kubeconfig_path),
         "apply", "--dry-run=server", "-f", "-"],
        input=yaml.safe_dump_all(docs),
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip


def test_every_object_applies_with_a_server_dry_run_and_nothing_is_created(
    built: list[Manifest],
    kube_api_client: client.ApiClient,
    kubesim_server: Any,
    opsboard_namespace: str,
) -> None:
    assert {"NetworkPolicy", "PodDisruptionBudget"} <= {doc["kind"] for doc in built}

    result = _dry_run(kubesim_server, built)

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == len(built)
    assert all(line.endswith("(server dry run)") for line in lines)
    apps = client.AppsV1Api(kube_api_client)
    assert not apps.list_namespaced_deployment(opsboard_namespace).items


def test_the_server_dry_run_rejects_a_broken_deployment(
    built: list[Manifest], kubesim_server: Any, opsboard_namespace: str
) -> None:
    web = next(d for d in built if d["kind"] == "Deployment")
    broken = yaml.safe_load(yaml.safe_dump(web))
    broken["spec"]["selector"]["matchLabels"] = {"app.kubernetes.io/name": "someone-else"}
    result = _dry_run(kubesim_server, [broken])
    assert result.returncode != 0
    assert "selector" in result.stderr
