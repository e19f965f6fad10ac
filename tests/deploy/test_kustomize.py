"""k8s/deploy builds with kubectl's kustomize and carries every piece the issue asks for."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.kustomize import (
    DEPLOY,
    K8S,
    Manifest,
    copy_with_secrets,
    documents,
    env_file_names,
    kustomize,
)


def _container(workload: Manifest, name: str) -> dict[str, Any]:
    [found] = [c for c in workload["spec"]["template"]["spec"]["containers"] if c["name"] == name]
    return found


def _one(built: list[Manifest], kind: str, name: str) -> Manifest:
    found = [d for d in built if d["kind"] == kind and d["metadata"]["name"].startswith(name)]
    assert len(found) == 1, f"expected one {kind} {name}, found {len(found)}"
    return found[0]


def test_it_builds_every_kind_the_install_needs(built: list[Manifest]) -> None:
    kinds = Counter(doc["kind"] for doc in built)
    assert kinds["Namespace"] == 1
    assert kinds["CustomResourceDefinition"] == len(list((K8S / "crd").glob("*_*.yaml")))
    assert kinds["Deployment"] == 4  # web, worker, watcher, beat
    assert kinds["StatefulSet"] == 1  # redis
    for kind in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
                 "ConfigMap", "Secret", "Service", "NetworkPolicy", "PodDisruptionBudget"):  # fmt: skip
        assert kinds[kind] >= 1, kind


def test_every_namespaced_object_lands_in_the_opsboard_namespace(built: list[Manifest]) -> None:
    cluster_scoped = {"Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding"}
    for doc in built:
        if doc["kind"] not in cluster_scoped:
            assert doc["metadata"].get("namespace") == "opsboard", doc["metadata"]["name"]


def test_it_refuses_to_build_without_the_secrets_file(tmp_path: Path) -> None:
    directory = copy_with_secrets(tmp_path)
    (directory / "secrets.env").unlink()
    result = kustomize(directory)
    assert result.returncode != 0
    assert "secrets.env" in result.stderr


def test_no_secrets_file_is_committed() -> None:
    assert (
        not (DEPLOY / "secrets.env").exists()
        or "secrets.env" in (DEPLOY / ".gitignore").read_text().split()
    )


@pytest.mark.parametrize("directory", ["crd", "rbac"])
def test_each_included_kustomization_lists_every_manifest_in_its_directory(directory: str) -> None:
    listed = documents((K8S / directory / "kustomization.yaml").read_text())[0]["resources"]
    on_disk = {p.name for p in (K8S / directory).glob("*.yaml")} - {"kustomization.yaml"}
    assert set(listed) == on_disk


def test_web_runs_two_replicas_behind_a_service_prometheus_scrapes(built: list[Manifest]) -> None:
    web = _one(built, "Deployment", "opsboard-web")
    assert web["spec"]["replicas"] == 2
    service = _one(built, "Service", "opsboard-web")
    annotations = service["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/path"] == "/metrics"
    pod_labels = web["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    [port] = service["spec"]["ports"]
    assert port["name"] == "http"  # a ServiceMonitor selects endpoints by port name
    [container] = web["spec"]["template"]["spec"]["containers"]
    assert container["ports"][0]["containerPort"] == int(annotations["prometheus.io/port"])


def test_web_probes_health_and_readiness(built: list[Manifest]) -> None:
    [container] = _one(built, "Deployment", "opsboard-web")["spec"]["template"]["spec"][
        "containers"
    ]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"


def test_web_migrates_the_database_before_it_serves(built: list[Manifest]) -> None:
    spec = _one(built, "Deployment", "opsboard-web")["spec"]["template"]["spec"]
    commands = {c["name"]: c["command"] for c in spec["initContainers"]}
    assert list(commands)[:2] == ["check-secrets", "migrate"]
    assert commands["migrate"] == ["python", "manage.py", "migrate", "--noinput"]


def _check_secrets(built: list[Manifest], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    spec = _one(built, "Deployment", "opsboard-web")["spec"]["template"]["spec"]
    [check] = [c for c in spec["initContainers"] if c["name"] == "check-secrets"]
    assert check["command"][0] == "python"
    return subprocess.run(
        [sys.executable, *check["command"][1:]], env=env, capture_output=True, text=True
    )


def test_web_pods_stop_on_an_empty_secret_naming_it(built: list[Manifest]) -> None:
    spec = _one(built, "Deployment", "opsboard-web")["spec"]["template"]["spec"]
    [check] = [c for c in spec["initContainers"] if c["name"] == "check-secrets"]
    secrets = {var["name"]: "a-value" for var in check["env"]}
    assert set(secrets) == set(env_file_names(DEPLOY / "secrets.env.example"))
    assert _check_secrets(built, secrets).returncode == 0
    result = _check_secrets(built, {**secrets, "DATABASE_URL": ""})
    assert result.returncode != 0
    assert "Empty in secrets.env: DATABASE_URL" in result.stderr


def test_watcher_runs_two_replicas_for_leader_election(built: list[Manifest]) -> None:
    watcher = _one(built, "Deployment", "opsboard-watcher")
    assert watcher["spec"]["replicas"] == 2
    container = _container(watcher, "watcher")
    assert container["command"] == ["python", "manage.py", "runwatcher"]


def test_beat_is_a_single_replica_that_is_never_doubled(built: list[Manifest]) -> None:
    beat = _one(built, "Deployment", "opsboard-beat")
    assert beat["spec"]["replicas"] == 1
    assert beat["spec"]["strategy"]["type"] == "Recreate"


def test_worker_has_a_liveness_check(built: list[Manifest]) -> None:
    container = _container(_one(built, "Deployment", "opsboard-worker"), "worker")
    assert container["command"][:4] == ["celery", "-A", "opsboard", "worker"]
    assert "exec" in container["livenessProbe"]


def test_redis_persists_append_only_on_a_volume_claim(built: list[Manifest]) -> None:
    redis = _one(built, "StatefulSet", "opsboard-redis")
    [container] = redis["spec"]["template"]["spec"]["containers"]
    assert "--appendonly yes" in " ".join(container["command"])
    [claim] = redis["spec"]["volumeClaimTemplates"]
    assert {m["name"] for m in container["volumeMounts"]} == {claim["metadata"]["name"]}


def test_every_pod_disruption_budget_selects_pods_of_a_workload(built: list[Manifest]) -> None:
    templates = [
        d["spec"]["template"]["metadata"]["labels"]
        for d in built
        if d["kind"] in {"Deployment", "StatefulSet"}
    ]
    budgets = [d for d in built if d["kind"] == "PodDisruptionBudget"]
    assert {b["metadata"]["name"] for b in budgets} >= {
        "opsboard-web", "opsboard-worker", "opsboard-watcher"
    }  # fmt: skip
    for budget in budgets:
        selector = budget["spec"]["selector"]["matchLabels"]
        assert any(selector.items() <= labels.items() for labels in templates)


@pytest.mark.parametrize("name", ["opsboard-worker", "opsboard-watcher"])
def test_worker_and_watcher_pods_serve_their_own_metrics(built: list[Manifest], name: str) -> None:
    pod = _one(built, "Deployment", name)["spec"]["template"]
    sidecar = _container(_one(built, "Deployment", name), "metrics")
    port = sidecar["ports"][0]["containerPort"]
    assert pod["metadata"]["annotations"]["prometheus.io/port"] == str(port)
    main = _container(_one(built, "Deployment", name), name.removeprefix("opsboard-"))
    directory = {e["name"]: e["value"] for e in main["env"] if "value" in e}
    assert directory["PROMETHEUS_MULTIPROC_DIR"] == sidecar["env"][0]["value"]
    policy = _one(built, "NetworkPolicy", "opsboard-metrics")
    assert policy["spec"]["ingress"] == [{"ports": [{"port": port, "protocol": "TCP"}]}]


def test_redis_accepts_connections_only_from_opsboard_pods(built: list[Manifest]) -> None:
    policies = [d for d in built if d["kind"] == "NetworkPolicy"]
    deny = [p for p in policies if p["spec"]["podSelector"] == {}]
    assert deny and not deny[0]["spec"].get("ingress")
    redis = _one(built, "NetworkPolicy", "opsboard-redis")
    [rule] = redis["spec"]["ingress"]
    assert rule["from"] == [
        {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "opsboard"}}}
    ]


def test_every_referenced_service_account_exists(built: list[Manifest]) -> None:
    accounts = {d["metadata"]["name"] for d in built if d["kind"] == "ServiceAccount"}
    for doc in built:
        if doc["kind"] in {"Deployment", "StatefulSet"}:
            spec = doc["spec"]["template"]["spec"]
            if spec.get("automountServiceAccountToken") is not False:
                assert spec.get("serviceAccountName") in accounts, doc["metadata"]["name"]
        if doc["kind"] in {"RoleBinding", "ClusterRoleBinding"}:
            for subject in doc["subjects"]:
                assert subject["name"] in accounts
                assert subject["namespace"] == "opsboard"


def test_every_secret_and_config_key_a_pod_reads_is_generated(built: list[Manifest]) -> None:
    data = {
        (d["kind"], d["metadata"]["name"]): set(d.get("data", {}))
        for d in built
        if d["kind"] in {"Secret", "ConfigMap"}
    }
    for doc in built:
        if doc["kind"] not in {"Deployment", "StatefulSet"}:
            continue
        spec = doc["spec"]["template"]["spec"]
        for container in spec["containers"] + spec.get("initContainers", []):
            for source in container.get("envFrom", []):
                assert ("ConfigMap", source["configMapRef"]["name"]) in data
            for var in container.get("env", []):
                ref = var.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    assert ref["key"] in data[("Secret", ref["name"])], var["name"]
        for volume in spec.get("volumes", []):
            if "secret" in volume:
                keys = data[("Secret", volume["secret"]["secretName"])]
                assert {item["key"] for item in volume["secret"]["items"]} <= keys
