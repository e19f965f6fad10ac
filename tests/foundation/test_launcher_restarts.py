"""`make run`'s supervisor: an exit now and then is restarted, a crash loop stops it all."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from opsboard import launcher
from opsboard.launcher import Child, Launcher


def exited_child() -> Child:
    child = Child("flaky", [sys.executable, "-c", "raise SystemExit(70)"])
    child.start({})
    assert child.process is not None
    child.process.wait(10)
    return child


@pytest.fixture
def supervisor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Launcher:
    monkeypatch.setenv("OPSBOARD_STATE_DIR", str(tmp_path))
    return Launcher()


def test_a_child_that_exits_is_started_again(supervisor: Launcher) -> None:
    child = exited_child()
    first = child.process
    supervisor.children.append(child)
    supervisor.restart_exited()
    assert child.process is not first  # a new process
    assert not supervisor.stopping.is_set()


def test_a_child_that_keeps_exiting_stops_the_product(supervisor: Launcher) -> None:
    child = exited_child()
    supervisor.children.append(child)
    for _ in range(launcher.MAX_RESTARTS):
        supervisor.restart_exited()
        assert not supervisor.stopping.is_set()
        assert child.process is not None
        child.process.wait(10)
    supervisor.restart_exited()
    assert supervisor.stopping.is_set()


def test_exits_older_than_the_window_are_forgiven(supervisor: Launcher) -> None:
    child = exited_child()
    supervisor.children.append(child)
    child.exits = [-launcher.RESTART_WINDOW] * launcher.MAX_RESTARTS  # long ago
    supervisor.restart_exited()
    assert not supervisor.stopping.is_set()
    assert len(child.exits) == 1
