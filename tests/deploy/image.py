"""What `docker build` would do, without a container engine: the build context that
.dockerignore leaves, and the instructions of the Dockerfile."""

from __future__ import annotations

import fnmatch
import os
import shutil
from pathlib import Path

from tests.deploy.kustomize import ROOT

DOCKERFILE = ROOT / "Dockerfile"


def _ignore_rules() -> list[tuple[bool, str]]:
    rules = []
    for line in (ROOT / ".dockerignore").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keep = line.startswith("!")
            rules.append((keep, line.removeprefix("!").strip("/")))
    return rules


def _matches(pattern: str, path: str) -> bool:
    """Docker's rule: a pattern matches a path or any of its parent directories."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    if pattern.startswith("**/"):
        return any(fnmatch.fnmatchcase(p, pattern[3:]) for p in parts)
    return any(fnmatch.fnmatchcase(prefix, pattern) for prefix in prefixes)


def is_ignored(path: str) -> bool:
    ignored = False
    for keep, pattern in _ignore_rules():  # the last matching rule wins
        if _matches(pattern, path):
            ignored = not keep
    return ignored


def context_files() -> list[str]:
    """Every file `COPY . .` would copy, relative to the repository root."""
    found = []
    for directory, subdirs, files in os.walk(ROOT):
        base = Path(directory).relative_to(ROOT).as_posix().removeprefix(".")
        # Prune ignored directories (.git, .venv): no "!" rule reaches inside them.
        subdirs[:] = [d for d in subdirs if not is_ignored(f"{base}/{d}".lstrip("/"))]
        found += [f"{base}/{f}".lstrip("/") for f in files]
    return sorted(f for f in found if not is_ignored(f))


def copy_context(dest: Path) -> Path:
    for relative in context_files():
        target = dest / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / relative, target)
    return dest


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    joined, current = [], ""
    for line in DOCKERFILE.read_text().splitlines():
        if line.lstrip().startswith("#") or not (current or line.strip()):
            continue
        current += line.rstrip().removesuffix("\\") + " " if line.rstrip().endswith("\\") else line
        if not line.rstrip().endswith("\\"):
            joined.append(current.strip())
            current = ""
    return [(text.split(None, 1)[0].upper(), text.split(None, 1)[1]) for text in joined]


def final_stage() -> list[tuple[str, str]]:
    steps = instructions()
    last_from = max(i for i, (name, _) in enumerate(steps) if name == "FROM")
    return steps[last_from:]
