"""Helpers for the kubesim contract suite: kubectl as a subprocess, CRD manifests."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client

from tests.kubesim.support import established_crd, memcached_crd

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
    with established_crd(kube_api_client, body):
        yield f"/apis/{body['spec']['group']}/v1alpha1/namespaces/{namespace}/memcacheds"
