"""Scenario 3, cold start: N Memcached CRs created at once on a running operator.

Timed from the first create to every CR spec-converged (Deployment replicas and
observedGeneration), and to every CR ready. opsboard runs with 1, 2 and 4 worker
processes (one prefork pool each); the kopf peer is one process (asyncio plus its
thread pool for sync handlers), as its users run it.
"""

from __future__ import annotations

import time
from typing import Any

from bench.fleet import create_many
from bench.report import Outcome, Row, Target
from bench.runner import NAMESPACE, Bench, start_operator
from bench.runs import reconciles_total

TIMEOUT = 240.0


def run(bench: Bench) -> Outcome:
    count = bench.size(full=1000, quick=20)
    worker_counts = [2] if bench.quick else [1, 2, 4]
    outcome = Outcome("coldstart", f"Cold start of {count:,} CRs")
    runs: dict[str, dict[str, Any]] = {}
    setups = [("opsboard", w) for w in worker_counts]
    if bench.peer:
        setups.append(("kopf", 1))
    for operator, workers in setups:
        plural = "s" if workers > 1 else ""
        label = f"opsboard, {workers} worker{plural}" if operator == "opsboard" else "kopf"
        runs[label] = _measure(bench, operator, workers, count)
        if runs[label]["converged_seconds"] is None:
            outcome.notes.append(
                f"{label}: only {runs[label]['converged']} of {count} converged "
                f"within {TIMEOUT:.0f} s"
            )

    kopf = runs.get("kopf", {})
    for label, figures in runs.items():
        if label == "kopf":
            continue
        target = Target(30) if figures["workers"] == 2 and count >= 1000 else None
        outcome.rows.append(
            Row(f"{label}: all converged", figures["converged_seconds"], "s",
                kopf.get("converged_seconds"), target)
        )  # fmt: skip
        outcome.rows.append(Row(f"{label}: all ready", figures["ready_seconds"], "s",
                                kopf.get("ready_seconds")))  # fmt: skip
        outcome.rows.append(Row(f"{label}: reconciles per second",
                                figures["reconciles_per_second"], "1/s"))  # fmt: skip
    outcome.bars["seconds until all converged"] = {
        label: float(f["converged_seconds"] or 0) for label, f in runs.items()
    }
    outcome.notes.append(
        f"{count:,} CRs of size 1 created from 8 client threads; creating them took "
        + ", ".join(f"{f['create_seconds']} s ({label})" for label, f in runs.items())
        + "; the clock starts at the first create"
    )
    if count < 1000:
        outcome.notes.append("quick run: the 30 s target applies to 1,000 CRs and is not judged")
    outcome.data = {"crs": count, "runs": runs}
    return outcome


def _measure(bench: Bench, operator: str, workers: int, count: int) -> dict[str, Any]:
    with bench.stack(f"coldstart-{operator}-{workers}") as stack:
        fleet, _ = start_operator(stack, operator, workers=workers, pods=count + 1)
        before = reconciles_total(stack.db) if operator == "opsboard" else 0
        names = [f"mc-{i:05d}" for i in range(count)]
        total = count + 1  # and the warm-up CR
        start = time.perf_counter()
        create_many(stack.api, NAMESPACE, names, size=1)
        created = time.perf_counter() - start
        spec = fleet.wait(lambda: len(fleet.spec_ok) >= total, TIMEOUT)
        left = TIMEOUT - (time.perf_counter() - start)
        ready = fleet.wait(lambda: len(fleet.ready_ok) >= total, left) if spec else None
        reconciles = reconciles_total(stack.db) - before if operator == "opsboard" else None
        converged = len(fleet.spec_ok) - 1
    spec_s = spec - start if spec else None
    return {
        "workers": workers,
        "create_seconds": round(created, 2),
        "converged_seconds": round(spec_s, 2) if spec_s else None,
        "ready_seconds": round(ready - start, 2) if ready else None,
        "converged": converged,
        "reconciles": reconciles,
        "crs_per_second": round(count / spec_s, 1) if spec_s else None,
        "reconciles_per_second": round(reconciles / spec_s, 1) if spec_s and reconciles else None,
    }
