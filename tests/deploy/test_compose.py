"""docker-compose.yml: the services, volumes, health checks and ordering the issue asks for.

`docker compose config` validates the files where the compose v2 client exists; the YAML
checks run everywhere."""

from __future__ import annotations

import base64
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509

from opsboard.embedded.ports import free_port
from tests.deploy.kustomize import ROOT, env_file_names

COMPOSE = ROOT / "docker-compose.yml"
CLUSTER = ROOT / "docker-compose.cluster.yml"
OPSBOARD_SERVICES = {"kubesim", "migrate", "bootstrap", "web", "worker", "watcher", "beat"}
ONE_SHOT = {"migrate", "bootstrap"}


def _services(path: Path = COMPOSE) -> dict[str, dict[str, Any]]:
    return yaml.safe_load(path.read_text())["services"]


class _StrictLoader(yaml.SafeLoader):
    """PyYAML keeps the last of two equal keys; compose (and a reader) would be misled."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        keys = [self.construct_object(k) for k, _ in node.value if k.value != "<<"]
        duplicates = {k for k in keys if keys.count(k) > 1}
        if duplicates:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate keys {sorted(duplicates)}", node.start_mark
            )
        return super().construct_mapping(node, deep)


@pytest.mark.parametrize("path", [COMPOSE, CLUSTER], ids=lambda p: p.name)
def test_the_files_have_no_duplicate_keys(path: Path) -> None:
    assert yaml.load(path.read_text(), Loader=_StrictLoader)["services"]


def test_the_duplicate_key_check_bites() -> None:
    with pytest.raises(yaml.constructor.ConstructorError, match="image"):
        yaml.load("a:\n  image: x\n  image: y\n", Loader=_StrictLoader)


def test_it_runs_every_process_on_its_dependencies() -> None:
    assert set(_services()) == OPSBOARD_SERVICES | {"redis", "postgres"}


def test_every_opsboard_process_runs_the_one_image_read_only_as_built() -> None:
    services = _services()
    images = {services[name]["image"] for name in OPSBOARD_SERVICES}
    assert images == {"${OPSBOARD_IMAGE:-opsboard:latest}"}
    for name in OPSBOARD_SERVICES:
        assert services[name]["read_only"] is True
        assert services[name]["cap_drop"] == ["ALL"]


def test_redis_persists_append_only_on_a_volume() -> None:
    redis = _services()["redis"]
    assert redis["command"][redis["command"].index("--appendonly") + 1] == "yes"
    assert "redis-data:/data" in redis["volumes"]


def test_postgres_keeps_its_data_on_a_volume() -> None:
    assert "postgres-data:/var/lib/postgresql/data" in _services()["postgres"]["volumes"]


def test_every_named_volume_is_declared() -> None:
    declared = set(yaml.safe_load(COMPOSE.read_text())["volumes"])
    used = {
        volume.split(":")[0]
        for service in _services().values()
        for volume in service.get("volumes", [])
        if not volume.startswith(("/", ".", "$"))
    }
    assert used == declared


def test_migrations_run_once_before_web_and_the_workers_start() -> None:
    services = _services()
    assert services["migrate"]["command"] == ["python", "manage.py", "migrate", "--noinput"]
    for name in ONE_SHOT:
        assert services[name]["restart"] == "no"
    for name in ("web", "worker", "watcher", "beat", "bootstrap"):
        dependency = services[name]["depends_on"]["migrate"]
        assert dependency["condition"] == "service_completed_successfully", name


def test_processes_wait_for_healthy_dependencies() -> None:
    services = _services()
    for name in ("web", "worker", "watcher", "beat"):
        depends = services[name]["depends_on"]
        assert depends["redis"]["condition"] == "service_healthy"
        assert depends["kubesim"]["condition"] == "service_healthy"
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_every_long_running_service_has_its_own_health_check() -> None:
    # The image's HEALTHCHECK probes the web port: every other role replaces or disables it.
    for name, service in _services().items():
        if name in ONE_SHOT:
            continue
        check = service["healthcheck"]
        assert check.get("disable") is True or check["test"][0] in {"CMD", "CMD-SHELL"}, name
    for name in ("redis", "postgres", "kubesim", "web", "worker"):
        assert "test" in _services()[name]["healthcheck"], name


def test_web_answers_readiness_on_loopback_by_default() -> None:
    web = _services()["web"]
    assert "/readyz" in " ".join(web["healthcheck"]["test"])
    assert web["ports"] == ["${OPSBOARD_BIND:-127.0.0.1}:${OPSBOARD_PORT:-8000}:8000"]


def test_workers_scale_with_the_scale_flag() -> None:
    worker = _services()["worker"]
    # A fixed container name or a published port would make a second replica fail.
    assert "container_name" not in worker and "ports" not in worker
    assert worker["command"][:4] == ["celery", "-A", "opsboard", "worker"]


def test_two_watchers_run_for_leader_election() -> None:
    watcher = _services()["watcher"]
    assert watcher["deploy"]["replicas"] == 2
    assert "container_name" not in watcher


def test_kubesim_shares_its_kubeconfig_with_every_process() -> None:
    services = _services()
    kubesim = services["kubesim"]
    assert "> /shared/kubeconfig" in kubesim["command"][-1]
    assert "kubeconfig:/shared" in kubesim["volumes"]
    assert "kubesim-data:/data" in kubesim["volumes"]
    for name in ("bootstrap", "web", "worker", "watcher", "beat"):
        assert services[name]["environment"]["KUBECONFIG"] == "/shared/kubeconfig"
        assert "kubeconfig:/shared:ro" in services[name]["volumes"]


def _unescape(command: str) -> str:
    return command.replace("$$", "$")


def test_the_kubesim_service_serves_and_shares_a_kubeconfig_naming_the_service(
    tmp_path: Path,
) -> None:
    """Runs the service's own shell command, with its paths and port moved under tmp_path."""
    port = str(free_port())
    moves = {"/data": tmp_path / "data", "/tmp/kubeconfig": tmp_path / "own-kubeconfig",
             "/shared/kubeconfig": tmp_path / "shared-kubeconfig", "6443": port}  # fmt: skip
    kubesim = _services()["kubesim"]
    command = _unescape(kubesim["command"][-1])
    check = _unescape(kubesim["healthcheck"]["test"][1])
    for old, new in moves.items():
        command, check = command.replace(old, str(new)), check.replace(old, str(new))
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    server = subprocess.Popen(["sh", "-c", command], cwd=ROOT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while subprocess.run(["sh", "-c", check], env=env, capture_output=True).returncode:
            assert server.poll() is None, "the kubesim service exited"
            assert time.monotonic() < deadline, "the kubesim service never became healthy"
            time.sleep(0.3)
        shared = yaml.safe_load((tmp_path / "shared-kubeconfig").read_text())
        cluster = shared["clusters"][0]["cluster"]
        assert cluster["server"] == f"https://kubesim:{port}"
        # The serving certificate names the service, so the other containers verify it.
        ca = base64.b64decode(cluster["certificate-authority-data"])
        cert = ssl.get_server_certificate(("127.0.0.1", int(port)))
        names = x509.load_pem_x509_certificate(cert.encode()).extensions.get_extension_for_class(
            x509.SubjectAlternativeName
        )
        assert "kubesim" in names.value.get_values_for_type(x509.DNSName)
        assert ca.startswith(b"-----BEGIN CERTIFICATE-----")
        server.send_signal(signal.SIGTERM)  # `docker compose stop`: the trap stops kubesim
        assert server.wait(timeout=30) is not None
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def test_the_cluster_override_replaces_kubesim_with_a_mounted_kubeconfig() -> None:
    override = _services(CLUSTER)
    assert override["kubesim"]["profiles"]  # kubesim then starts only if asked for
    for name in ("bootstrap", "web", "worker", "watcher", "beat"):
        path = override[name]["environment"]["KUBECONFIG"]
        assert any(v.rsplit(":", 2)[1] == path for v in override[name]["volumes"]), name
        # The base file's dependency on kubesim must not hold the others back.
        assert _services()[name]["depends_on"]["kubesim"]["required"] is False


def test_secrets_come_from_the_env_file_which_is_never_committed_or_built() -> None:
    services = _services()
    for name in OPSBOARD_SERVICES - {"kubesim"}:
        assert services[name]["env_file"] == ".env"
    assert ".env" in (ROOT / ".gitignore").read_text().split()
    assert ".env" in (ROOT / ".dockerignore").read_text().split()
    assert "admin_password" in services["bootstrap"]["secrets"]


def test_every_secret_the_compose_file_requires_is_in_the_example() -> None:
    text = COMPOSE.read_text()
    required = set(re.findall(r"\$\{([A-Z_]+):\?", text))
    assert {"OPSBOARD_SECRET_KEY", "POSTGRES_PASSWORD", "OPSBOARD_ADMIN_PASSWORD"} <= required
    required |= {
        s["environment"] for s in yaml.safe_load(text)["secrets"].values() if "environment" in s
    }
    assert required <= set(env_file_names(ROOT / ".env.example"))


def _compose_client() -> list[str] | None:
    for command in (["docker", "compose"], ["docker-compose"]):
        found = shutil.which(command[0])
        if found is None:
            continue
        command = [found, *command[1:]]
        probe = subprocess.run([*command, "version"], capture_output=True, text=True)
        if probe.returncode == 0 and re.search(r"v?2\.\d+", probe.stdout):
            return command
    return None


def _compose_config(
    tmp_path: Path, files: list[Path], *, empty: str = ""
) -> subprocess.CompletedProcess[str]:
    """`docker compose config` on copies of the files, with .env.example's secrets filled in."""
    client = _compose_client()
    if client is None:
        pytest.skip("no docker compose v2 client here; the YAML checks above still ran")
    for path in files:
        shutil.copy(path, tmp_path / path.name)
    example = (ROOT / ".env.example").read_text()
    env = re.sub(r"^([A-Z_]+)=$", r"\1=test-secret", example, flags=re.M)
    if empty:
        env = env.replace(f"{empty}=test-secret", f"{empty}=")
    (tmp_path / ".env").write_text(env)
    args = [arg for path in files for arg in ("-f", path.name)]
    return subprocess.run(
        [*client, *args, "config", "--quiet"],
        cwd=tmp_path,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "OPSBOARD_KUBECONFIG": "/dev/null"},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("files", [[COMPOSE], [COMPOSE, CLUSTER]], ids=["kubesim", "cluster"])
def test_docker_compose_config_accepts_the_files(tmp_path: Path, files: list[Path]) -> None:
    result = _compose_config(tmp_path, files)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "secret", ["OPSBOARD_SECRET_KEY", "POSTGRES_PASSWORD", "OPSBOARD_ADMIN_PASSWORD"]
)
def test_docker_compose_refuses_an_empty_secret(tmp_path: Path, secret: str) -> None:
    result = _compose_config(tmp_path, [COMPOSE], empty=secret)
    assert result.returncode != 0
    assert f"set {secret} in .env" in result.stderr
