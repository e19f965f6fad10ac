"""What an earlier `make run` left running, found from the pids it recorded, and stopped.

Each process `make run` starts has a session of its own, so that a Ctrl-C reaches the
launcher only and it can stop them in order. A launcher killed outright (SIGKILL, the OOM
killer) therefore leaves them running, kubesim and redis-server with their data files:
the next start failed on kubesim's port, or (given another port) ran a second kubesim on
the same files. So the launcher records each process (its pid and start time: a pid alone
may have been given to another process since) and stops what still runs at its next start.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import psutil

PIDS = "pids"  # under the state dir: one file per process, "<pid> <create time>"
LAUNCHER = "launcher.pid"


def record(state: Path, name: str, pid: int) -> None:
    try:
        created = psutil.Process(pid).create_time()
    except psutil.NoSuchProcess:
        return  # already gone: nothing to stop later
    (state / PIDS).mkdir(parents=True, exist_ok=True)
    (state / PIDS / name).write_text(f"{pid} {created!r}\n")


def forget_all(state: Path) -> None:
    for path in (state / PIDS).glob("*"):
        path.unlink(missing_ok=True)


def running_launcher(state: Path) -> int | None:
    """The pid of another launcher still running from this state dir, if there is one."""
    try:
        pid = int((state / LAUNCHER).read_text().strip())
        if pid == os.getpid():
            return None
        running = "opsboard.launcher" in " ".join(psutil.Process(pid).cmdline())
    except (OSError, ValueError, psutil.Error):
        return None
    return pid if running else None


def stop_leftovers(state: Path, *, timeout: float = 10.0) -> list[str]:
    """Stops every recorded process still running, with the processes it started (its
    process group: a Celery worker's pool, gunicorn's workers), the last started first, as
    Ctrl-C would have (the servers last); "name (pid N)" of each."""
    stopped: list[str] = []
    recorded = sorted((state / PIDS).glob("*"), key=lambda p: p.stat().st_mtime, reverse=True)
    for path in recorded:
        process = _same_process(path)
        path.unlink(missing_ok=True)
        if process is None:
            continue
        group = [process, *process.children(recursive=True)]
        _terminate(process)
        _, alive = psutil.wait_procs(group, timeout=timeout)
        for straggler in alive:
            with contextlib.suppress(psutil.NoSuchProcess):
                straggler.kill()
        psutil.wait_procs(alive, timeout=timeout)
        stopped.append(f"{path.name} (pid {process.pid})")
    return stopped


def _same_process(path: Path) -> psutil.Process | None:
    """The recorded process, if it still runs: same pid and same start time."""
    try:
        pid_text, created_text = path.read_text().split()
        process = psutil.Process(int(pid_text))
        if abs(process.create_time() - float(created_text)) > 0.01:
            return None  # the pid now belongs to another process
    except (OSError, ValueError, psutil.Error):
        return None
    return process


def _terminate(process: psutil.Process) -> None:
    """SIGTERM to the process's group when it leads one (each child leads its session)."""
    try:
        if os.getpgid(process.pid) == process.pid:
            os.killpg(process.pid, signal.SIGTERM)
        else:
            process.terminate()
    except (ProcessLookupError, psutil.NoSuchProcess):
        pass
