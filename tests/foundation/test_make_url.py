"""`make url`: the URL and login of the running `make run`, or one line on stderr saying it
is not running and a failing exit, so a script capturing its output gets nothing."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _make_url(state: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPSBOARD_STATE_DIR": str(state)}
    return subprocess.run(
        ["make", "-s", "url"], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )


def _launched(state: Path, *, pid: int) -> None:
    """The state dir as a launcher with this pid leaves it once its web app answers."""
    (state / "url").write_text("http://127.0.0.1:8123/\n")
    (state / "admin_password").write_text("s3cret\n")
    (state / "launcher.pid").write_text(str(pid))


def test_when_stopped_it_says_so_on_stderr_and_fails(tmp_path: Path) -> None:
    shown = _make_url(tmp_path)
    assert shown.returncode != 0
    assert shown.stdout == ""
    assert shown.stderr.startswith(
        f"opsboard is not running from {tmp_path}: start it with make run\n"
    )


def test_a_url_left_by_a_launcher_killed_outright_is_not_shown(tmp_path: Path) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    _launched(tmp_path, pid=gone.pid)
    shown = _make_url(tmp_path)
    assert shown.returncode != 0 and shown.stdout == ""
    assert "opsboard is not running" in shown.stderr


def test_while_running_it_prints_the_url_and_login(tmp_path: Path) -> None:
    _launched(tmp_path, pid=os.getpid())
    shown = _make_url(tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == (
        "opsboard is up:  http://127.0.0.1:8123/\nlog in as admin with password: s3cret\n"
    )
