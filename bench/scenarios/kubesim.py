"""kubesim's own speed (issue 3, part 1): GET, write, watch delivery, LIST, RSS.

Measured by bench/kubesim_api.py, which kubesim owns; we run it and carry its figures.
"""

from __future__ import annotations

from bench import external
from bench.report import Outcome
from bench.runner import Bench

MODULE = "bench.kubesim_api"


def run(bench: Bench) -> Outcome:
    outcome = Outcome("kubesim", "kubesim API server speed (bench/kubesim_api.py)")
    if not external.available(MODULE):
        outcome.error = f"{MODULE} does not exist yet"
        return outcome
    printed = external.run_module(MODULE, quick=bench.quick, timeout=600)
    outcome.notes.extend(line for line in printed.splitlines() if line.strip())
    outcome.data = {"printed": printed}
    return outcome
