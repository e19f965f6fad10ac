"""Where a size patch's time went: `python -m bench patch --trace`.

opsboard's processes mark a change's way with OPSBOARD_TRACE set (controllers.trace); the
patch scenario adds its own two marks, `patched` (its PATCH answered: where its clock
starts) and `converged` (its watch showed the Deployment's replicas and the CR's
observedGeneration). Read together, per patch, from the watcher's read of the new
generation: the watcher (the mirror written, the key pushed), Redis to a pool process and
the key's lock (one round trip), the run up to its status write's send, the Deployment's
send, the server's answers, and the bench's watch. A figure per phase: its p50 and p90
over the patches.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bench.stats import percentile

# (label, from mark, to mark): the marks are named in `_marks_of`.
PHASES = [
    ("the watcher: the change mirrored, the key pushed, Redis's answer read", "watched", "queued"),
    ("the watcher → a pool process holds the key (popped, its lock taken)", "watched", "popped"),
    ("the run begun", "popped", "run"),
    ("the run: the mirror read, the status told, up to its send", "run", "status send"),
    ("the status request written to its socket", "status send", "status sent"),
    ("the status's send → the Deployment's send", "status send", "deployment send"),
    ("the Deployment's PATCH, sent → answered", "deployment send", "deployment answered"),
    ("the status PATCH, sent → answered", "status send", "status answered"),
    ("the Deployment's send → the bench's watch shows both", "deployment send", "converged"),
    ("in all: the bench's clock start → converged (its figure)", "patched", "converged"),
]  # fmt: skip


@dataclass(frozen=True)
class Mark:
    at: float
    pid: str
    what: str
    detail: str


def append(path: Path, marks: Iterable[tuple[float, str, str]]) -> None:
    """The bench's own marks (at, what, detail), in the processes' format."""
    with path.open("a", encoding="utf-8") as file:
        file.writelines(f"{at:.6f} bench {what} {detail}\n" for at, what, detail in marks)


def read(path: Path) -> list[Mark]:
    marks = []
    for line in path.read_text(encoding="utf-8").splitlines():
        at, pid, what, *rest = line.split(" ", 3)
        marks.append(Mark(float(at), pid, what, rest[0] if rest else ""))
    return sorted(marks, key=lambda mark: mark.at)


def phases(marks: list[Mark], namespace: str, name: str) -> dict[str, dict[str, float | int]]:
    """Per phase, its p50 and p90 in ms over the patches whose two marks of it were found."""
    durations: dict[str, list[float]] = {label: [] for label, _, _ in PHASES}
    for found in _patches(marks, namespace, name):
        for label, start, end in PHASES:
            if start in found and end in found:
                durations[label].append((found[end] - found[start]) * 1000)
    return {
        label: {
            "n": len(values),
            "p50_ms": round(percentile(values, 50), 3),
            "p90_ms": round(percentile(values, 90), 3),
        }
        for label, values in durations.items()
        if values
    }


def _patches(marks: list[Mark], namespace: str, name: str) -> Iterable[dict[str, float]]:
    for patched in marks:
        if patched.what == "patched" and patched.detail.startswith(f"{namespace}/{name} "):
            generation = patched.detail.split()[1]
            yield {"patched": patched.at, **_marks_of(marks, namespace, name, generation)}


def _marks_of(marks: list[Mark], namespace: str, name: str, generation: str) -> dict[str, float]:
    """The times of one generation's marks; each of the key's marks is the first after the
    watcher read that generation, the writes those of the run that followed, in its process."""
    change, key = f"{namespace}/{name} {generation}", f"/{namespace}/{name}"
    found: dict[str, float] = {}
    for mark in marks:
        if mark.what in ("watched", "converged") and mark.detail == change:
            found.setdefault(mark.what, mark.at)
    if "watched" not in found:
        return found
    after = [m for m in marks if m.at >= found["watched"]]
    for mark in after:
        if mark.what in ("queued", "popped", "run") and f"{key} " in f"{mark.detail} ":
            if mark.what not in found and mark.what == "run":
                found.update(_writes(after, mark))
            found.setdefault(mark.what, mark.at)
            if {"queued", "popped", "run"} <= found.keys():
                break
    if found.get("popped", 0.0) > found.get("run", float("inf")):
        # The key ran again in place (runner.AGAIN_IN_PLACE: it changed while it ran),
        # popped by no one: the pop found is a later run's.
        del found["popped"]
    return found


def _writes(marks: list[Mark], run: Mark) -> dict[str, float]:
    """The run's status and Deployment PATCHes: sent, on the socket, answered."""
    namespace, name = run.detail.split("/")[1:3]
    targets = {
        "status": f"/namespaces/{namespace}/memcacheds/{name}/status",
        "deployment": f"/namespaces/{namespace}/deployments/{name}",
    }
    found: dict[str, float] = {}
    for mark in marks:
        if mark.pid != run.pid or mark.at <= run.at:
            continue
        if mark.what == "run":
            break  # the process's next run
        method, _, path = mark.detail.partition(" ")
        for label, target in targets.items():
            if method == "PATCH" and path.endswith(target):
                found.setdefault(f"{label} {mark.what}", mark.at)
    return found
