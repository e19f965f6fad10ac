"""Scenario 1, patch to converged: size patches alternating 3↔5, one at a time.

Timed from the patch returning to (a) the Deployment's spec.replicas matching and
status.observedGeneration equal to the generation, (b) status.nodes listing the
right number of pods, (c) status.readyReplicas reaching the size (this one
includes kubesim's simulated pod start delay).
"""

from __future__ import annotations

import functools
import time
from typing import Any

from bench.report import Outcome, Row, Target
from bench.runner import NAMESPACE, Bench, start_operator
from bench.stack import POD_START_DELAY
from bench.stats import summary_ms

NAME = "patched"
TIMEOUT = 30.0


def run(bench: Bench) -> Outcome:
    count = bench.size(full=200, quick=6)
    outcome = Outcome("patch", "Patch to converged (size 3↔5)")
    figures: dict[str, dict[str, dict[str, float | int]]] = {}
    for operator in bench.operators():
        figures[operator], samples = _measure(bench, operator, count)
        outcome.samples[f"{operator}: replicas + observedGeneration"] = samples[0]
        outcome.samples[f"{operator}: readyReplicas"] = samples[2]

    ours, peer = figures["opsboard"], figures.get("kopf", {})

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
    ]  # fmt: skip
    spec_row = outcome.rows[0]
    if spec_row.ratio is not None:
        outcome.rows.append(
            Row("kopf p50 / opsboard p50", spec_row.ratio, "x", target=Target(5, ">="),
                higher_is_better=True)
        )  # fmt: skip
    outcome.notes.append(
        f"{count} patches per operator, one at a time, each after the previous one was ready; "
        f"kubesim's pod start delay is {POD_START_DELAY * 1000:.0f} ms ±50% (in readyReplicas "
        "only); every time includes kubesim's watch delivery to the bench"
    )
    outcome.data = {"patches": count, "pod_start_delay_s": POD_START_DELAY, "figures": figures}
    return outcome


def _measure(bench: Bench, operator: str, count: int) -> tuple[dict[str, Any], list[list[float]]]:
    with bench.stack(f"patch-{operator}") as stack:
        fleet = start_operator(stack, operator)
        created = stack.api.create_memcached(NAMESPACE, NAME, size=3)
        generation = created["metadata"]["generation"]
        fleet.wait(lambda: fleet.ready(NAME, generation), TIMEOUT)
        samples: list[list[float]] = [[], [], []]  # spec, nodes, ready
        timeouts = 0
        for i in range(count):
            size = 5 if i % 2 == 0 else 3
            patched = stack.api.patch_memcached(NAMESPACE, NAME, {"spec": {"size": size}})
            start = time.perf_counter()
            g = patched["metadata"]["generation"]
            marks = [
                fleet.wait(functools.partial(fleet.spec_converged, NAME, g), TIMEOUT),
                fleet.wait(functools.partial(fleet.nodes_converged, NAME, g), TIMEOUT),
                fleet.wait(functools.partial(fleet.ready, NAME, g), TIMEOUT),
            ]
            for series, mark in zip(samples, marks, strict=True):
                if mark is None:
                    timeouts += 1
                else:
                    series.append(mark - start)
    figures = {
        "spec": summary_ms(samples[0]),
        "nodes": summary_ms(samples[1]),
        "ready": summary_ms(samples[2]),
        "timeouts": timeouts,
    }
    return figures, samples
