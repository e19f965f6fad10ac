"""State survives a restart, and an acknowledged write survives a crash."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import urllib3

from kubesim.server import KubeSim
from tests.kubesim.support import memcached_crd

pytestmark = pytest.mark.kubesim_only


def _cm(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}


def test_objects_uids_and_resource_versions_survive_a_restart(tmp_path: Path) -> None:
    first = KubeSim(data_dir=tmp_path, cluster=False).start()
    created = first.store.create("configmaps", _cm("kept"), namespace="default")
    first.store.create("configmaps", _cm("gone"), namespace="default")
    first.store.delete("configmaps", "default", "gone")
    first.stop()
    last_rv = first.store.resource_version  # after stop: background writers have finished

    second = KubeSim(data_dir=tmp_path, cluster=False).start()
    try:
        again = second.store.get("configmaps", "default", "kept")
        assert again["metadata"]["uid"] == created["metadata"]["uid"]
        assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
        with pytest.raises(Exception, match="not found"):
            second.store.get("configmaps", "default", "gone")
        newer = second.store.create("configmaps", _cm("new"), namespace="default")
        assert int(newer["metadata"]["resourceVersion"]) == last_rv + 1
    finally:
        second.stop()


def test_an_object_s_last_update_is_what_survives_a_restart(tmp_path: Path) -> None:
    first = KubeSim(data_dir=tmp_path, cluster=False).start()
    first.store.create("configmaps", _cm("changing"), namespace="default")
    patched = first.store.patch("configmaps", "default", "changing", {"data": {"k": "v2"}})
    first.stop()
    second = KubeSim(data_dir=tmp_path, cluster=False).start()
    try:
        again = second.store.get("configmaps", "default", "changing")
        assert again["data"] == {"k": "v2"}
        assert again["metadata"]["resourceVersion"] == patched["metadata"]["resourceVersion"]
    finally:
        second.stop()


@pytest.mark.parametrize("last", ["update", "delete"])
def test_resource_versions_count_on_from_the_last_write_after_a_restart(
    tmp_path: Path, last: str
) -> None:
    """An object's write stores its resourceVersion with it, a removal stores the counter:
    whichever came last, the next write after a restart is numbered after it."""
    first = KubeSim(data_dir=tmp_path, cluster=False).start()
    first.store.create("configmaps", _cm("a"), namespace="default")
    first.store.create("configmaps", _cm("b"), namespace="default")
    first.store.delete("configmaps", "default", "b")
    if last == "update":
        first.store.update("configmaps", {**_cm("a"), "data": {"k": "w"}}, namespace="default")
    else:
        first.store.create("configmaps", _cm("c"), namespace="default")
        first.store.delete("configmaps", "default", "c")
    first.stop()
    last_rv = first.store.resource_version

    second = KubeSim(data_dir=tmp_path, cluster=False).start()
    try:
        newer = second.store.create("configmaps", _cm("d"), namespace="default")
        assert int(newer["metadata"]["resourceVersion"]) == last_rv + 1
    finally:
        second.stop()


def test_custom_resource_definitions_are_served_after_a_restart(tmp_path: Path) -> None:
    first = KubeSim(data_dir=tmp_path, cluster=False).start()
    first.store.create("customresourcedefinitions.apiextensions.k8s.io", memcached_crd())
    first.store.create(
        "memcacheds.cache.example.com",
        {
            "apiVersion": "cache.example.com/v1alpha1",
            "kind": "Memcached",
            "metadata": {"name": "m"},
            "spec": {"size": 2},
        },
        namespace="default",
    )
    first.stop()
    second = KubeSim(data_dir=tmp_path, cluster=False).start()
    try:
        got = second.store.get("memcacheds.cache.example.com", "default", "m")
        assert got["spec"]["size"] == 2
    finally:
        second.stop()


def _start(data_dir: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kubesim",
            "serve",
            "--port",
            "0",
            "--data-dir",
            str(data_dir),
            "--no-cluster",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    line = proc.stdout.readline() if proc.stdout else ""
    assert line.startswith("kubesim serving "), line
    return proc, line.split()[-1]


def test_an_acknowledged_write_survives_a_crash(tmp_path: Path) -> None:
    proc, url = _start(tmp_path)
    # The CA and the admin's token are kept in the data dir, so both survive the crash.
    http = urllib3.PoolManager(
        ca_certs=str(tmp_path / "pki" / "ca.crt"),
        headers={
            "Authorization": f"Bearer {(tmp_path / 'auth' / 'admin.token').read_text().strip()}"
        },
    )
    try:
        resp = http.request(
            "POST", f"{url}/api/v1/namespaces/default/configmaps", json=_cm("durable")
        )
        assert resp.status == 201
        uid = resp.json()["metadata"]["uid"]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    proc, url = _start(tmp_path)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                resp = http.request("GET", f"{url}/api/v1/namespaces/default/configmaps/durable")
                break
            except urllib3.exceptions.HTTPError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        assert resp.status == 200
        assert resp.json()["metadata"]["uid"] == uid
    finally:
        proc.terminate()
        proc.wait(timeout=10)
