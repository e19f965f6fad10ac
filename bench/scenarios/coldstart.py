"""Scenario 3, cold start: N Memcached CRs created at once on a running operator.

Timed from the first create to every CR spec-converged (Deployment replicas and
observedGeneration); readiness, which adds kubesim's pod start delay, is timed by
the patch scenario and not waited for here, to keep the full run within its budget.
opsboard runs with 1, 2 and 4 worker processes (one prefork pool each); the kopf
peer is one process (asyncio plus its thread pool for sync handlers), as its users
run it.
"""

from __future__ import annotations

import time
from typing import Any

from bench.fleet import create_many
from bench.report import Outcome, Row, Target
from bench.runner import NAMESPACE, Bench, start_operator
from bench.runs import reconciles_total

TIMEOUT = 240.0
KEPT = {("opsboard", 2), ("kopf", 1)}


def run(bench: Bench) -> Outcome:
    count = bench.size(full=1000, quick=20)
    outcome = Outcome("coldstart", f"Cold start of {count:,} CRs")
    runs: dict[str, dict[str, Any]] = {}
    # The fleets of the last two runs (kopf, then opsboard with 2 workers) are kept for
    # the cost and UI scenarios; the runs that are not kept go first.
    setups = [] if bench.quick else [("opsboard", 1), ("opsboard", 4)]
    setups += [("kopf", 1)] if bench.peer else []
    setups += [("opsboard", 2)]
    for operator, workers in setups:
        plural = "s" if workers > 1 else ""
        label = f"opsboard, {workers} worker{plural}" if operator == "opsboard" else "kopf"
        runs[label] = _measure(bench, operator, workers, count, keep=(operator, workers) in KEPT)
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
    outcome.notes.append(
        "the kopf fleet stays up, idle, during the 2-worker run (it is handed to the cost "
        "scenario); an idle fleet costs kubesim's node heartbeats only"
        if bench.peer
        else "the 2-worker fleet is handed to the cost scenario"
    )
    if count < 1000:
        outcome.notes.append("quick run: the 30 s target applies to 1,000 CRs and is not judged")
    outcome.data = {"crs": count, "runs": runs}
    return outcome


def _measure(
    bench: Bench, operator: str, workers: int, count: int, *, keep: bool
) -> dict[str, Any]:
    stack = bench.stack(f"coldstart-{operator}-{workers}")
    try:
        # Room for the pods the cost and UI scenarios add to a kept fleet.
        fleet = start_operator(stack, operator, workers=workers, pods=count + 150)
        before = reconciles_total(stack.db) if operator == "opsboard" else 0
        names = [f"mc-{i:05d}" for i in range(count)]
        total = count + 1  # and the warm-up CR
        start = time.perf_counter()
        create_many(stack.api, NAMESPACE, names, size=1)
        created = time.perf_counter() - start
        spec = fleet.wait(lambda: len(fleet.spec_ok) >= total, TIMEOUT)
        reconciles = reconciles_total(stack.db) - before if operator == "opsboard" else None
        converged = len(fleet.spec_ok) - 1
    except BaseException:
        stack.stop()
        raise
    if keep and spec:
        bench.keep(operator, stack, fleet)
    else:
        stack.stop()
    spec_s = spec - start if spec else None
    return {
        "workers": workers,
        "create_seconds": round(created, 2),
        "converged_seconds": round(spec_s, 2) if spec_s else None,
        "converged": converged,
        "reconciles": reconciles,
        "crs_per_second": round(count / spec_s, 1) if spec_s else None,
        "reconciles_per_second": round(reconciles / spec_s, 1) if spec_s and reconciles else None,
    }
