"""A worker pod's metrics sidecar serves what the pod's real Celery worker recorded.

The web pods' /metrics cannot see another pod's multiprocess files, so each worker and
watcher pod serves its own; this runs the sidecar's command beside a real worker."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from typing import Any

import pytest

from controllers.base import Key
from opsboard.embedded.ports import free_port
from opsboard.engine.enqueue import reconcile_enqueue
from tests.deploy.kustomize import ROOT, Manifest

pytestmark = pytest.mark.django_db(transaction=True)


def _sidecar_command(built: list[Manifest]) -> tuple[list[str], int]:
    [worker] = [
        d for d in built if d["kind"] == "Deployment" and d["metadata"]["name"] == "opsboard-worker"
    ]
    [sidecar] = [
        c for c in worker["spec"]["template"]["spec"]["containers"] if c["name"] == "metrics"
    ]
    return sidecar["command"], sidecar["ports"][0]["containerPort"]


def _scrape(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()
    except OSError:
        return ""


def test_the_sidecar_serves_the_reconciles_of_the_pods_worker(
    built: list[Manifest], engine: Any, namespace: str
) -> None:
    command, port = _sidecar_command(built)
    assert command[0] == "python"
    mine = free_port()
    argv = [sys.executable, command[1], command[2].replace(f"({port},", f"({mine},")]
    engine.start_worker()
    sidecar = subprocess.Popen(argv, cwd=ROOT, env=engine.env(), stderr=subprocess.PIPE)
    try:
        # A CR that does not exist: the reconcile finds nothing to do, and succeeds.
        reconcile_enqueue(key=Key("memcached", namespace, "absent"), trigger="manual")
        wanted = 'controller_runtime_reconcile_total{controller="memcached",result="success"}'
        deadline = time.monotonic() + 30
        while wanted not in (text := _scrape(f"http://127.0.0.1:{mine}/metrics")):
            assert sidecar.poll() is None, sidecar.stderr.read().decode() if sidecar.stderr else ""
            assert time.monotonic() < deadline, f"no reconcile in the sidecar's metrics:\n{text}"
            time.sleep(0.3)
    finally:
        sidecar.terminate()
        sidecar.wait(timeout=10)
