"""CPU used over a window by named groups of processes (user + system, reaped children
included), so a figure can be split per process and summed for a whole product."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import psutil

Groups = Callable[[], dict[str, list[psutil.Process]]]


def tree(pid: int) -> list[psutil.Process]:
    """A process and all its descendants; none if it is gone."""
    try:
        parent = psutil.Process(pid)
        return [parent, *parent.children(recursive=True)]
    except psutil.Error:
        return []


def _cpu(proc: psutil.Process) -> float | None:
    try:
        t = proc.cpu_times()
    except psutil.Error:
        return None
    total: float = t.user + t.system + t.children_user + t.children_system
    return total


def _snapshot(groups: Groups) -> dict[str, dict[tuple[int, float], float]]:
    """Per group, CPU seconds so far by process (pid and start time: a reused pid is
    another process)."""
    out: dict[str, dict[tuple[int, float], float]] = {}
    for label, procs in groups().items():
        seen = out.setdefault(label, {})
        for proc in procs:
            cpu = _cpu(proc)
            if cpu is not None:
                seen[(proc.pid, proc.create_time())] = cpu
    return out


@dataclass
class CpuWindow:
    """`groups` is asked at both ends: processes started within the window (a pool
    process replaced, a browser's renderer) count whole; one that ended within it counts
    only if its parent reaped it (then it is in the parent's children times)."""

    groups: Groups
    _start: dict[str, dict[tuple[int, float], float]] = field(default_factory=dict)
    _started: float = 0.0

    def start(self) -> CpuWindow:
        self._start = _snapshot(self.groups)
        self._started = time.monotonic()
        return self

    def stop(self) -> tuple[float, dict[str, float], dict[str, int]]:
        """Seconds elapsed, CPU seconds per group, processes per group at the end."""
        end = _snapshot(self.groups)
        elapsed = time.monotonic() - self._started
        used = {
            label: sum(cpu - self._start.get(label, {}).get(key, 0.0) for key, cpu in now.items())
            for label, now in end.items()
        }
        return elapsed, used, {label: len(now) for label, now in end.items()}
