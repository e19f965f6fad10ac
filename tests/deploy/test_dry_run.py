"""The built install applies cleanly to the API server with a server-side dry run.

Against kubesim by default, or the cluster of OPSBOARD_TEST_KUBECONFIG: the same test."""

from __future__ import annotations

import subprocess
from typing import Any

import yaml
from kubernetes import client, dynamic
from kubernetes.dynamic.exceptions import ResourceNotFoundError

from tests.deploy.kustomize import KUBECTL, Manifest

# Kinds kubesim does not serve yet; against a real cluster nothing is left out.
NOT_IN_KUBESIM = {"NetworkPolicy", "PodDisruptionBudget"}


def _served(api: client.ApiClient, doc: Manifest) -> bool:
    try:
        dynamic.DynamicClient(api).resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
    except ResourceNotFoundError:
        return False
    return True


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
    served = [doc for doc in built if _served(kube_api_client, doc)]
    left_out = {doc["kind"] for doc in built} - {doc["kind"] for doc in served}
    assert left_out <= (set() if kubesim_server.real else NOT_IN_KUBESIM)

    result = _dry_run(kubesim_server, served)

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == len(served)
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
