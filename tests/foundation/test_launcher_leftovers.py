"""A launcher killed outright leaves its processes running; the next start stops them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from opsboard.embedded import leftovers
from opsboard.launcher import Child, Launcher
from tests.support.waiting import wait_for

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]


def _started(state: Path, name: str, args: list[str] = SLEEPER) -> subprocess.Popen[str]:
    child = Child(name, args)
    child.start({})
    assert child.process is not None
    leftovers.record(state, name, child.process.pid)
    return child.process


def test_recorded_processes_still_running_are_stopped_with_their_children(
    tmp_path: Path,
) -> None:
    # A parent with a child of its own, as a Celery worker has its pool processes.
    parent = _started(
        tmp_path,
        "worker",
        [sys.executable, "-c",
         "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
         "'import time; time.sleep(120)']); time.sleep(120)"],
    )  # fmt: skip
    kubesim = _started(tmp_path, "kubesim")
    pool = _wait_for_child(parent.pid)

    stopped = leftovers.stop_leftovers(tmp_path, timeout=5)

    assert sorted(stopped) == sorted([f"worker (pid {parent.pid})", f"kubesim (pid {kubesim.pid})"])
    assert parent.wait(5) is not None and kubesim.wait(5) is not None
    assert not psutil.pid_exists(pool.pid) or pool.status() == psutil.STATUS_ZOMBIE
    assert list((tmp_path / leftovers.PIDS).iterdir()) == []  # forgotten


def test_a_recorded_pid_given_to_another_process_since_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / leftovers.PIDS).mkdir()
    # This very process, recorded with another start time: a pid reused.
    (tmp_path / leftovers.PIDS / "web").write_text(f"{os.getpid()} 12345.0\n")
    assert leftovers.stop_leftovers(tmp_path, timeout=1) == []
    assert not (tmp_path / leftovers.PIDS / "web").exists()


def test_a_second_launcher_on_the_same_state_dir_refuses_to_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A process whose command line is a launcher's, holding the state dir.
    other = subprocess.Popen([*SLEEPER, "-m", "opsboard.launcher"])
    try:
        (tmp_path / leftovers.LAUNCHER).write_text(str(other.pid))
        monkeypatch.setenv("OPSBOARD_STATE_DIR", str(tmp_path))
        assert Launcher().run() == 1
        assert f"opsboard is already running from {tmp_path} (launcher pid {other.pid})" in (
            capsys.readouterr().out
        )
        assert (tmp_path / leftovers.LAUNCHER).read_text() == str(other.pid)  # untouched
        assert other.poll() is None  # and left running
    finally:
        other.kill()
        other.wait()


def test_a_launcher_pid_left_by_a_dead_launcher_does_not_block_a_start(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    (tmp_path / leftovers.LAUNCHER).write_text(str(gone.pid))
    assert leftovers.running_launcher(tmp_path) is None


def _wait_for_child(pid: int) -> psutil.Process:
    children = wait_for(psutil.Process(pid).children, timeout=10, what="the parent's child")
    return children[0]
