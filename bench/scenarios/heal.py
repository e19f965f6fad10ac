"""The WebServer operator healing its children (issue 6: "restored within a second").

Measured by bench/operators_heal.py, which the operators own; we call its measure().
"""

from __future__ import annotations

from bench import external
from bench.report import Outcome, Row, Target
from bench.runner import Bench

MODULE = "bench.operators_heal"


def run(bench: Bench) -> Outcome:
    outcome = Outcome("heal", "WebServer self-healing (bench/operators_heal.py)")
    if not external.available(MODULE):
        outcome.error = f"{MODULE} does not exist yet"
        return outcome
    from bench import operators_heal

    rounds = bench.size(full=10, quick=3)
    figures = operators_heal.measure(rounds=rounds, workdir=bench.workdir)
    for label, summary in figures.items():
        outcome.rows.append(Row(f"{label} p50", summary.get("p50_ms"), "ms"))
        outcome.rows.append(Row(f"{label} p99", summary.get("p99_ms"), "ms", target=Target(1000)))
    outcome.notes.append(
        f"{rounds} rounds per kind of damage (`python -m bench.operators_heal` runs 30); from "
        "the damaging call returning to the first GET that sees the repair (GETs every 2 ms)"
    )
    outcome.data = {"rounds": rounds, "figures": figures}
    return outcome
