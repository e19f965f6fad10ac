"""State survives a restart, and an acknowledged write survives a crash; the journal keeps
it through a torn last record, compactions (finished or not) and older kubesims' files."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import urllib3

from kubesim.persistence import HEADER, JOURNAL, LENGTH, SET_ASIDE, SNAPSHOT, Persistence
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


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}


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
        env=_env(),
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


# -- the journal itself ----------------------------------------------------------------


def _write(data_dir: Path, *records: tuple[int, str, bytes | None]) -> None:
    """Records (rv, name, data or None) for default's ConfigMaps, then a clean close."""
    store = Persistence(data_dir)
    store.load()
    for rv, name, data in records:
        store.put(rv, "configmaps", "default", name, data)
    store.close()


def _objects(data_dir: Path, **kw: int) -> tuple[int, dict[tuple[str, str, str], bytes]]:
    store = Persistence(data_dir, **kw)
    rv, rows = store.load()
    objects = {(r, ns, n): data for r, ns, n, data in rows}
    store.close()
    return rv, objects


def test_a_record_cut_short_by_a_crash_is_dropped_and_writing_goes_on(tmp_path: Path) -> None:
    _write(tmp_path, (1, "a", b'{"v":1}'), (2, "b", b'{"v":2}'))
    journal = tmp_path / JOURNAL
    whole = journal.read_bytes()
    journal.write_bytes(whole[:-3])  # the process died within its last write
    assert _objects(tmp_path) == (1, {("configmaps", "default", "a"): b'{"v":1}'})
    _write(tmp_path, (2, "c", b'{"v":3}'))
    rv, objects = _objects(tmp_path)
    assert rv == 2 and set(objects) == {("configmaps", "default", n) for n in "ac"}


def test_a_record_whose_length_was_never_written_ends_the_journal(tmp_path: Path) -> None:
    """The length goes in last: a crash before it leaves the record's bytes behind the end,
    where the next records go; none of them may be read back as a record afterwards."""
    elsewhere = tmp_path / "elsewhere"
    _write(elsewhere, (9, "ghost", b"{}"))
    ghost = (elsewhere / JOURNAL).read_bytes()
    _write(tmp_path, (1, "a", b'{"v":1}'))
    # Left by the crash: no length, and bytes that would read as a record right after the
    # record written next in their place (its length: the record "b" below).
    after_b = LENGTH.size + HEADER.size + len("configmaps" + "default" + "b" + "{}")
    journal = tmp_path / JOURNAL
    journal.write_bytes(journal.read_bytes() + bytes(after_b) + ghost)
    # Load, write "b", and crash again (no close, which would cut the file at its end).
    script = (
        "import os, sys; from kubesim.persistence import Persistence; p = Persistence(sys.argv[1]);"
        " assert p.load()[0] == 1; p.put(2, 'configmaps', 'default', 'b', b'{}'); os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, env=_env())
    assert _objects(tmp_path) == (
        2,
        {("configmaps", "default", "a"): b'{"v":1}', ("configmaps", "default", "b"): b"{}"},
    )


def test_one_kubesim_at_a_time_keeps_a_data_dir(tmp_path: Path) -> None:
    first = Persistence(tmp_path)
    with pytest.raises(RuntimeError, match="in use by another kubesim"):
        Persistence(tmp_path)
    first.close()
    Persistence(tmp_path).close()


def test_the_journal_is_compacted_into_a_snapshot_as_it_grows(tmp_path: Path) -> None:
    store = Persistence(tmp_path, compact_at=4096)
    store.load()
    written = 0
    for rv in range(1, 2001):  # two objects rewritten over and over, a third removed
        name, data = f"cm-{rv % 2}", b"x" * 100 + str(rv).encode()
        store.put(rv, "configmaps", "default", name, data)
        written += LENGTH.size + HEADER.size + len("configmaps" + "default" + name) + len(data)
    store.put(2001, "configmaps", "", "gone", b"{}")
    store.put(2002, "configmaps", "", "gone", None)
    written += 2 * (LENGTH.size + HEADER.size + len("configmaps" + "gone")) + 2
    store.close()  # waits for a compaction under way
    assert (tmp_path / SNAPSHOT).exists() and not (tmp_path / SET_ASIDE).exists()
    # At least the first 4 KB were set aside (more while no compaction was writing).
    assert (tmp_path / JOURNAL).stat().st_size < written - 4096
    rv, objects = _objects(tmp_path)
    assert rv == 2002
    assert objects == {
        ("configmaps", "default", "cm-0"): b"x" * 100 + b"2000",
        ("configmaps", "default", "cm-1"): b"x" * 100 + b"1999",
    }


def test_a_compaction_the_process_did_not_finish_is_finished_on_load(tmp_path: Path) -> None:
    _write(tmp_path, (1, "a", b"old"), (2, "b", b"b"))
    # Set aside for a snapshot that was never written; a new journal went on meanwhile.
    (tmp_path / JOURNAL).replace(tmp_path / SET_ASIDE)
    newer = tmp_path / "elsewhere"
    _write(newer, (3, "a", b"new"), (4, "b", None))
    (newer / JOURNAL).replace(tmp_path / JOURNAL)
    assert _objects(tmp_path) == (4, {("configmaps", "default", "a"): b"new"})
    assert not (tmp_path / SET_ASIDE).exists()
    assert _objects(tmp_path) == (4, {("configmaps", "default", "a"): b"new"})  # and again


def test_state_kept_by_an_older_kubesim_in_sqlite_is_converted(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "kubesim.sqlite3")
    db.execute(
        "CREATE TABLE objects (resource TEXT NOT NULL, namespace TEXT NOT NULL,"
        " name TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (resource, namespace, name))"
    )
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    db.execute("INSERT INTO objects VALUES ('configmaps', 'default', 'kept', ?)", (b"{}",))
    db.execute("INSERT INTO meta VALUES ('resourceVersion', '41')")
    db.commit()
    db.close()
    assert _objects(tmp_path) == (41, {("configmaps", "default", "kept"): b"{}"})
    assert not (tmp_path / "kubesim.sqlite3").exists()
    assert _objects(tmp_path) == (41, {("configmaps", "default", "kept"): b"{}"})
