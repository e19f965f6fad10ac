"""The optional component that scales the workers on queue depth (k8s/components/
autoscale-workers): it builds into an install, and a real API server accepts it."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.kustomize import KUBECTL, Manifest, copy_with_secrets, documents, kustomize


@pytest.fixture(scope="module")
def autoscaled(tmp_path_factory: pytest.TempPathFactory) -> list[Manifest]:
    """An overlay of k8s/deploy with the component, as the component's comment says."""
    deploy = copy_with_secrets(tmp_path_factory.mktemp("k8s"))
    overlay = deploy.parent / "autoscaled"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        "resources: [../deploy]\ncomponents: [../components/autoscale-workers]\n"
    )
    result = kustomize(overlay)
    assert result.returncode == 0, result.stderr
    return documents(result.stdout)


def _one(docs: list[Manifest], kind: str, name: str) -> Manifest:
    [found] = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    return found


def test_the_component_scales_the_worker_deployment_on_the_queue_depth(
    autoscaled: list[Manifest], built: list[Manifest]
) -> None:
    hpa = _one(autoscaled, "HorizontalPodAutoscaler", "opsboard-worker")
    assert hpa["metadata"]["namespace"] == "opsboard"
    target = hpa["spec"]["scaleTargetRef"]
    worker = _one(autoscaled, "Deployment", target["name"])
    assert (target["apiVersion"], target["kind"]) == ("apps/v1", "Deployment")
    assert worker["spec"]["template"]["spec"]["containers"][0]["command"][:4] == [
        "celery", "-A", "opsboard", "worker",
    ]  # fmt: skip
    [metric] = hpa["spec"]["metrics"]
    assert metric["external"]["metric"]["name"] == "opsboard_workqueue_depth"
    assert 1 <= hpa["spec"]["minReplicas"] < hpa["spec"]["maxReplicas"]
    # The HPA owns the count: re-applying must not reset it. Without the component: unchanged.
    assert "replicas" not in worker["spec"]
    assert "replicas" in _one(built, "Deployment", "opsboard-worker")["spec"]
    assert not [d for d in built if d["kind"] == "HorizontalPodAutoscaler"]
    assert len(autoscaled) == len(built) + 1


def test_a_real_api_server_accepts_it_with_a_server_dry_run(
    autoscaled: list[Manifest], kubesim_server: Any, opsboard_namespace: str
) -> None:
    if not kubesim_server.real:
        pytest.skip(
            "kubesim serves no autoscaling/v2; set OPSBOARD_TEST_KUBECONFIG to a real "
            "cluster for the dry run"
        )
    docs = [
        _one(autoscaled, "HorizontalPodAutoscaler", "opsboard-worker"),
        _one(autoscaled, "Deployment", "opsboard-worker"),
    ]
    result = subprocess.run(
        [KUBECTL, "--kubeconfig", str(Path(kubesim_server.kubeconfig_path)),
         "apply", "--dry-run=server", "-f", "-"],
        input=yaml.safe_dump_all(docs), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "horizontalpodautoscaler.autoscaling/opsboard-worker created (server dry run)" in (
        result.stdout
    )
