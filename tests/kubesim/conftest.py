"""Helpers for the kubesim contract suite: kubectl as a subprocess, CRD manifests."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

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
