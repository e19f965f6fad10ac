"""Benchmarks that other parts of the project own (bench/kubesim_api.py by kubesim,
bench/engine_latency.py by the engine), run as subprocesses so they keep their own
set-up; their printed figures are carried into our output and JSON as they are."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def run_module(module: str, *, quick: bool, timeout: float) -> str:
    """Its stdout; `--quick` is passed on when the module's --help offers it."""
    args = [sys.executable, "-m", module]
    help_text = subprocess.run(
        [*args, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
    ).stdout
    if quick and "--quick" in help_text:
        args.append("--quick")
    result = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"{module} exited {result.returncode}: {result.stderr[-800:]}")
    return result.stdout
