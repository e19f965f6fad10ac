"""Scenario 1, patch to converged: size patches alternating 3↔5, one at a time.

Timed from the patch returning to (a) the Deployment's spec.replicas matching and
status.observedGeneration equal to the generation, (b) status.nodes listing the
right number of pods, (c) status.readyReplicas reaching the size (this one
includes the pods' start: kubesim's simulated delay, or a real kubelet's).

The floor, measured in the same run: the same Deployment patched directly, with no
operator, timed to (a) the watch showing its new replicas and (c) as many of its pods
ready, counted as the operators count them: what the API server and its controllers need.
"""

from __future__ import annotations

import functools
import shutil
import time
from pathlib import Path
from typing import Any

from bench import trace
from bench.report import Outcome, Row, Target
from bench.runner import FLOOR, Bench, expect, start_operator
from bench.stack import POD_START_DELAY
from bench.stats import summary_ms

NAME = "patched"
TIMEOUT = 30.0


def run(bench: Bench) -> Outcome:
    count = bench.size(full=200, quick=6)
    outcome = Outcome("patch", f"Patch to converged (size 3↔5), on {bench.server}")
    figures: dict[str, dict[str, Any]] = {}
    for operator in [*bench.operators(), FLOOR]:
        figures[operator], samples = _measure(bench, operator, count)
        outcome.samples[f"{operator}: replicas + observedGeneration"] = samples[0]
        outcome.samples[f"{operator}: readyReplicas"] = samples[2]

    ours, peer, floor = figures["opsboard"], figures.get("kopf", {}), figures[FLOOR]

    def pick(which: str, key: str, source: dict[str, Any]) -> float | None:
        value = source.get(which, {}).get(key)
        return float(value) if value is not None else None

    outcome.rows = [
        Row("replicas + observedGeneration p50", pick("spec", "p50_ms", ours), "ms",
            pick("spec", "p50_ms", peer), Target(50)),
        Row("replicas + observedGeneration p99", pick("spec", "p99_ms", ours), "ms",
            pick("spec", "p99_ms", peer), Target(250)),
        Row("status.nodes right p50", pick("nodes", "p50_ms", ours), "ms",
            pick("nodes", "p50_ms", peer)),
        Row("status.nodes right p99", pick("nodes", "p99_ms", ours), "ms",
            pick("nodes", "p99_ms", peer)),
        Row("readyReplicas = size p50", pick("ready", "p50_ms", ours), "ms",
            pick("ready", "p50_ms", peer)),
        Row("readyReplicas = size p99", pick("ready", "p99_ms", ours), "ms",
            pick("ready", "p99_ms", peer)),
        Row("floor (Deployment patched directly): replicas seen p50 / p99",
            pick("spec", "p50_ms", floor), "ms", pick("spec", "p99_ms", floor), paired=False),
        Row("floor: as many of the Deployment's pods ready p50 / p99",
            pick("ready", "p50_ms", floor), "ms", pick("ready", "p99_ms", floor), paired=False),
    ]  # fmt: skip
    for label, key, target in (("p50", "p50_ms", Target(0.5)), ("p99", "p99_ms", Target(1))):
        mine, theirs = pick("spec", key, ours), pick("spec", key, peer)
        if mine is not None and theirs:
            outcome.rows.append(
                Row(f"replicas + observedGeneration {label}: opsboard ÷ kopf",
                    round(mine / theirs, 2), "x", target=target)
            )  # fmt: skip
    for label, figure in ours.get("trace", {}).items():
        outcome.rows.append(
            Row(f"trace: {label}, p50 / p90", figure["p50_ms"], "ms", figure["p90_ms"],
                paired=False)
        )  # fmt: skip
    outcome.notes.append(
        f"{count} patches per operator, one at a time, each after the previous one was ready; "
        + (
            f"kubesim's pod start delay is {POD_START_DELAY * 1000:.0f} ms ±50% (in "
            "readyReplicas only); "
            if bench.kubeconfig is None
            else ""
        )
        + "every time includes the server's watch delivery to the bench; the floor's two "
        "figures are its p50 and p99 in the opsboard and kopf columns"
    )
    outcome.data = {"patches": count, "server": bench.server, "figures": figures}
    if bench.kubeconfig is None:
        outcome.data["pod_start_delay_s"] = POD_START_DELAY
    return outcome


def _measure(bench: Bench, operator: str, count: int) -> tuple[dict[str, Any], list[list[float]]]:
    with bench.stack(f"patch-{operator}") as stack:
        traced = stack.dir / "trace.txt" if bench.trace and operator == "opsboard" else None
        if traced is not None:
            stack.env["OPSBOARD_TRACE"] = str(traced)
        fleet = start_operator(stack, operator)
        namespace = stack.namespace
        floor = operator == FLOOR
        if floor:
            stack.api.create_deployment(namespace, NAME, replicas=3)
            expect(fleet, lambda: fleet.deployment_ready(NAME, 3), TIMEOUT, f"{NAME} ready")
        else:
            created = stack.api.create_memcached(namespace, NAME, size=3)
            generation = created["metadata"]["generation"]
            expect(fleet, lambda: fleet.ready(NAME, generation), TIMEOUT, f"{NAME} ready")
        samples: list[list[float]] = [[], [], []]  # spec, nodes, ready
        phases: dict[str, dict[str, float | int]] = {}
        timeouts = 0
        for i in range(count):
            size = 5 if i % 2 == 0 else 3
            if floor:
                stack.api.patch_deployment(namespace, NAME, {"spec": {"replicas": size}})
                start = time.perf_counter()
                marks = [
                    fleet.wait(functools.partial(fleet.deployment_scaled, NAME, size), TIMEOUT),
                    None,
                    fleet.wait(functools.partial(fleet.deployment_ready, NAME, size), TIMEOUT),
                ]
            else:
                patched = stack.api.patch_memcached(namespace, NAME, {"spec": {"size": size}})
                start = time.perf_counter()
                g = patched["metadata"]["generation"]
                marks = [
                    fleet.wait(functools.partial(fleet.spec_converged, NAME, g), TIMEOUT),
                    fleet.wait(functools.partial(fleet.nodes_converged, NAME, g), TIMEOUT),
                    fleet.wait(functools.partial(fleet.ready, NAME, g), TIMEOUT),
                ]
            for which, (series, mark) in enumerate(zip(samples, marks, strict=True)):
                if mark is not None:
                    series.append(mark - start)
                elif not (floor and which == 1):  # the floor has no status.nodes
                    timeouts += 1
            if traced is not None:  # after the waits, off the clock
                _mark(traced, f"{namespace}/{NAME} {g}", start, marks[0])
        if traced is not None and bench.trace is not None:
            phases = trace.phases(trace.read(traced), namespace, NAME)
            bench.trace.mkdir(parents=True, exist_ok=True)
            shutil.copy(traced, bench.trace / "patch-trace.txt")
    figures: dict[str, Any] = {
        "spec": summary_ms(samples[0]),
        "nodes": summary_ms(samples[1]),
        "ready": summary_ms(samples[2]),
        "timeouts": timeouts,
    }
    if phases:
        figures["trace"] = phases
    return figures, samples


def _mark(traced: Path, change: str, start: float, converged: float | None) -> None:
    """The bench's two marks of a patch, its clock's start and the convergence it saw,
    each a perf_counter() reading turned into the processes' clock (time.time())."""
    to_wall = time.time() - time.perf_counter()
    marks = [(start + to_wall, "patched", change)]
    if converged is not None:
        marks.append((converged + to_wall, "converged", change))
    trace.append(traced, marks)
