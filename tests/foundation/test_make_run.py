"""`make run`'s supervisor, started as a person would, then stopped with Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import psutil
import pytest
import yaml
from kubernetes import client, config

from controllers.conditions import condition_of
from opsboard.embedded.ports import free_port
from tests.foundation.make_run_identities import (
    assert_kubectl_rolls_out,
    assert_operator_grants_are_the_roles,
)
from tests.support.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]


class Launcher:
    def __init__(self, state: Path, port: int, home: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPSBOARD_", "DATABASE_"))}
        env.pop("REDIS_URL", None)
        env.pop("KUBECONFIG", None)
        env.update(
            OPSBOARD_STATE_DIR=str(state),
            OPSBOARD_PORT=str(port),
            OPSBOARD_KUBESIM_PORT="0",
            HOME=str(home),  # to see that nothing is written outside the state dir
        )
        self.env = env
        self.port = port
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "opsboard.launcher"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout
        for line in self.process.stdout:
            self.lines.append(line)

    def wait_for(self, text: str, timeout: float = 120) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines:
                if text in line:
                    return line
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        pytest.fail(f"launcher never printed {text!r}:\n{''.join(self.lines[-60:])}")

    def get(self, path: str) -> int:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=10) as response:
            return response.status

    def interrupt(self) -> int:
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(60)


def _sample_kinds() -> list[tuple[str, str, str, str]]:
    """(group, version, plural, sample name) of each CRD in k8s/crd; name "" without one."""
    root = Path(__file__).resolve().parents[2] / "k8s"
    names = {}
    for path in (root / "samples").glob("*.yaml"):
        for body in yaml.safe_load_all(path.read_text()):
            if body and "metadata" in body:
                names[(body["apiVersion"], body["kind"])] = body["metadata"]["name"]
    found = []
    for path in sorted((root / "crd").glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        if crd.get("kind") != "CustomResourceDefinition":
            continue
        spec, version = crd["spec"], crd["spec"]["versions"][0]["name"]
        api_version = f"{spec['group']}/{version}"
        name = names.get((api_version, spec["names"]["kind"]), "")
        found.append((spec["group"], version, spec["names"]["plural"], name))
    return found


def port_is_free(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.timeout(400)
def test_make_run_serves_the_login_page_and_stops_cleanly_keeping_state(tmp_path: Path) -> None:
    port = free_port()
    home = tmp_path / "home"
    home.mkdir()
    state = tmp_path / "state"
    first = Launcher(state, port, home)
    try:
        first.wait_for(f"http://127.0.0.1:{port}/")
        password_line = first.wait_for("log in as admin with password:")
        assert first.get("/healthz") == 200
        assert first.get("/accounts/login/") == 200
        assert first.get("/readyz") == 200
        # The embedded cluster is up, with the CRDs installed and the samples applied.
        api = config.new_client_from_config(config_file=str(state / "kubeconfig"))
        samples = client.CustomObjectsApi(api).list_namespaced_custom_object(
            "cache.example.com", "v1alpha1", "default", "memcacheds"
        )
        assert [m["metadata"]["name"] for m in samples["items"]] == ["memcached-sample"]
        # Every operator runs: each sample, of all four kinds, is reconciled to Available.
        sample_kinds = [d for d in _sample_kinds() if d[3]]
        assert len(sample_kinds) == 4, sample_kinds

        def not_available() -> dict[str, str]:
            """Each sample not Available yet, with its conditions (a 403 names the grant)."""
            crs = client.CustomObjectsApi(api)
            pending = {}
            for group, version, plural, name in sample_kinds:
                cr = crs.get_namespaced_custom_object(group, version, "default", plural, name)
                if condition_of(cr, "Available").get("status") != "True":
                    conditions = (cr.get("status") or {}).get("conditions") or []
                    pending[name] = "; ".join(f"{c['type']}: {c['message']}" for c in conditions)
            return pending

        waiting: dict[str, str] = {}

        def all_available() -> bool:
            waiting.clear()
            waiting.update(not_available())
            return not waiting

        try:
            wait_for(all_available, timeout=120, interval=0.5, what="every sample Available")
        except AssertionError:
            raise AssertionError(f"not Available after 120 s: {waiting}") from None
        # They ran as the install's ServiceAccount, with exactly k8s/rbac's grants.
        assert_operator_grants_are_the_roles(state / "kubeconfig")
        assert_kubectl_rolls_out(state / "kubeconfig")
        _assert_console_is_for_people(first, port)
    finally:
        assert first.interrupt() == 0
    assert "stopped; state kept" in "".join(first.lines)
    assert port_is_free(port)
    for server in ("redis", "kubesim"):
        assert port_is_free(int((state / server / "port").read_text())), server
    assert list(home.iterdir()) == [], "written outside the state dir"

    # State survives: the same admin password, the same database, the same redis data.
    second = Launcher(state, port, home)
    try:
        assert second.wait_for("log in as admin with password:") == password_line
        assert "Updated user admin" in "".join(second.lines)
    except BaseException:
        second.interrupt()
        raise
    # Killed outright, the launcher leaves its processes running (each has its own
    # session); the next start stops them, kubesim and redis-server included, and comes up.
    second.process.kill()
    second.process.wait(10)
    third = Launcher(state, port, home)
    try:
        assert third.wait_for("log in as admin with password:") == password_line
        stopped = [line for line in third.lines if "left running by a start" in line]
        assert any("kubesim (pid" in line for line in stopped), stopped
        assert any("redis-server (pid" in line for line in stopped), stopped
        assert third.get("/readyz") == 200
    finally:
        assert third.interrupt() == 0
    assert port_is_free(port)
    for server in ("redis", "kubesim"):
        assert port_is_free(int((state / server / "port").read_text())), server
    assert _running_from(state) == [], "left running"


def _running_from(state: Path) -> list[str]:
    """The command lines of the processes still running with `state` in theirs."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if str(state) in cmdline:
            found.append(cmdline)
    return found


def _assert_console_is_for_people(launcher: Launcher, port: int) -> None:
    """One line per reconcile that did something, none of Celery's per-task lines, and the
    URL and login again on demand (make url, SIGUSR1)."""
    console = "".join(launcher.lines)
    assert re.search(
        r"memcached default/memcached-sample  event → \w+.* Created Deployment", console
    )
    assert "→ Success" in console
    assert "succeeded in" not in console and "] received" not in console.lower(), console[-3000:]
    assert "GET /" not in console, "the access log is for DEBUG"
    shown = subprocess.run(
        ["make", "-s", "url"], cwd=ROOT, env=launcher.env, capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr
    assert f"opsboard is up:  http://127.0.0.1:{port}/" in shown.stdout
    assert "log in as admin with password: " in shown.stdout
    banners = console.count("opsboard is up:")
    launcher.process.send_signal(signal.SIGUSR1)
    wait_for(
        lambda: "".join(launcher.lines).count("opsboard is up:") > banners,
        timeout=10,
        what="the banner again after SIGUSR1",
    )
