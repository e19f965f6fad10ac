"""Helpers for the kubesim contract suite: kubectl as a subprocess, CRD manifests."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client

from tests.kubesim.support import memcached_crd, wait_for

KUBECTL = shutil.which("kubectl")

Kubectl = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def kubectl(kubesim_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    """Run kubectl against the session's server; returns the completed process."""
    if KUBECTL is None:
        pytest.skip("kubectl is not installed on this machine")
    cache = tmp_path_factory.getbasetemp() / "kubectl-cache"

    def run(
        *args: str, input: str | None = None, check: bool = True, namespace: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        cmd = [KUBECTL, f"--kubeconfig={kubesim_server.kubeconfig_path}", f"--cache-dir={cache}"]
        if namespace:
            cmd.append(f"--namespace={namespace}")
        proc = subprocess.run(
            [*cmd, *args], input=input, capture_output=True, text=True, timeout=60
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed:\n{proc.stderr}")
        return proc

    return run


@pytest.fixture
def memcacheds(kube_api_client: client.ApiClient, namespace: str) -> Iterator[str]:
    """A Memcached CRD in a group of its own; its objects' path in the namespace."""
    body = memcached_crd(group=f"t{uuid.uuid4().hex[:8]}.example.com")
    ext = client.ApiextensionsV1Api(kube_api_client)
    ext.create_custom_resource_definition(body)

    def established() -> bool:
        got = ext.read_custom_resource_definition(body["metadata"]["name"])
        return any(c.type == "Established" and c.status == "True"
                   for c in got.status.conditions or [])  # fmt: skip

    wait_for(established, what="the CRD to be established")
    yield f"/apis/{body['spec']['group']}/v1alpha1/namespaces/{namespace}/memcacheds"
    ext.delete_custom_resource_definition(body["metadata"]["name"])
