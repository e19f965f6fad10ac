"""Benchmarks that other parts of the project own, run as their owners run them."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def run_module(module: str, *, args: list[str], timeout: float) -> str:
    """Its stdout, as `python -m module args...` prints it."""
    result = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip
    if result.returncode != 0:
        raise RuntimeError(f"{module} exited {result.returncode}: {result.stderr[-800:]}")
    return result.stdout
