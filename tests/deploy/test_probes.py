"""The worker and watcher liveness checks pass against real engine processes, fail without.

The same command serves as the docker compose health check and the Kubernetes probe."""

from __future__ import annotations

import signal
import subprocess
import sys
from datetime import timedelta
from typing import Any

import pytest
import yaml
from django.utils import timezone

from opsboard.mirror.models import WatcherHeartbeat
from tests.deploy.kustomize import ROOT, Manifest
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _k8s_probe(built: list[Manifest], name: str) -> list[str]:
    [deployment] = [
        d
        for d in built
        if d["kind"] == "Deployment" and d["metadata"]["name"] == f"opsboard-{name}"
    ]
    [container] = [
        c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == name
    ]
    return container["livenessProbe"]["exec"]["command"]


def _compose_probe(name: str) -> list[str]:
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    test = services[name]["healthcheck"]["test"]
    assert test[0] == "CMD"
    return test[1:]


@pytest.mark.parametrize("name", ["worker", "watcher"])
def test_compose_and_kubernetes_use_the_same_check(built: list[Manifest], name: str) -> None:
    assert _compose_probe(name) == _k8s_probe(built, name)


def _probe(command: list[str], env: dict[str, str]) -> int:
    assert command[0] == "python"
    argv = [sys.executable, *command[1:]]
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, timeout=60).returncode


def test_a_running_worker_is_alive_and_a_stopped_one_is_not(
    built: list[Manifest], engine: Any
) -> None:
    command = _k8s_probe(built, "worker")
    assert _probe(command, engine.env()) == 1  # no worker on this host yet
    worker = engine.start_worker()  # returns once its heartbeat is in Redis
    assert _probe(command, engine.env()) == 0
    engine.kill(worker, signal.SIGTERM)
    assert _probe(command, engine.env()) == 1


def test_a_watcher_with_a_fresh_heartbeat_is_alive_and_a_stale_one_is_not(
    built: list[Manifest], engine: Any
) -> None:
    command = _k8s_probe(built, "watcher")
    env = engine.env()
    assert _probe(command, env) == 1
    watcher = engine.start_watcher()
    wait_for(lambda: _probe(command, env) == 0, interval=0.5, what="the probe to pass")
    engine.kill(watcher, signal.SIGKILL)  # a hung watcher stops beating, like a dead one
    WatcherHeartbeat.objects.update(heartbeat_at=timezone.now() - timedelta(minutes=2))
    assert _probe(command, env) == 1
