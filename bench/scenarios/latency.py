"""Scenario 2, event to reconcile start (queue latency), idle and under load.

A size patch of a probe CR is the event; the reconcile that first observed its
generation says when it started (ReconcileRun.started_at). The difference covers
the watch delivery to the watcher, the enqueue, Redis and a worker picking it up.
Under load, other CRs have their size flipped at a steady LOAD_RATE patches per
second: well within what the engine sustains, so the figure shows queueing behind
real work rather than an ever-growing backlog.
"""

from __future__ import annotations

import functools
import itertools
import threading
import time
from datetime import UTC, datetime

from bench import external
from bench.fleet import Fleet, create_many
from bench.report import Outcome, Row, Target
from bench.runner import Bench, expect, start_operator
from bench.runs import first_run_started
from bench.stack import Stack
from bench.stats import summary_ms

PROBE = "probe"
# The engine's own measurement of the same thing, carried along when it exists.
ENGINE_BENCH = "bench.engine_latency"
LOAD_CRS = 20
LOAD_RATE = 10.0  # patches per second of the other CRs


def run(bench: Bench) -> Outcome:
    count = bench.size(full=100, quick=5)
    outcome = Outcome("latency", "Event to reconcile start (opsboard)")
    with bench.stack("latency") as stack:
        fleet = start_operator(stack, "opsboard", workers=2, pods=2 * LOAD_CRS + 4)
        stack.api.create_memcached(stack.namespace, PROBE, size=1)
        expect(fleet, lambda: fleet.ready(PROBE, 1), 60, f"{PROBE} ready")
        idle = _probe(stack, fleet, count, pause=0.1)

        names = [f"load-{i}" for i in range(LOAD_CRS)]
        create_many(stack.api, stack.namespace, names, size=1)
        expect(fleet, lambda: all(fleet.ready(n, 1) for n in names), 120,
               f"the {len(names)} load CRs ready")  # fmt: skip
        stop, patches = threading.Event(), itertools.count()
        thread = threading.Thread(target=_load, args=(stack, names, stop, patches), daemon=True)
        thread.start()
        began = time.perf_counter()
        loaded = _probe(stack, fleet, count, pause=0.1)
        stop.set()
        load_rate = next(patches) / (time.perf_counter() - began)
        thread.join()

    idle_s, loaded_s = summary_ms(idle), summary_ms(loaded)
    outcome.rows = [
        Row("Memcached: event -> start, idle p50", idle_s.get("p50_ms"), "ms", target=Target(10)),
        Row("Memcached: event -> start, idle p99", idle_s.get("p99_ms"), "ms", target=Target(50)),
        Row(f"Memcached: under load ({load_rate:.0f} patches/s) p50", loaded_s.get("p50_ms"), "ms"),
        Row(f"Memcached: under load ({load_rate:.0f} patches/s) p99", loaded_s.get("p99_ms"), "ms"),
    ]
    outcome.samples = {"idle": idle, "under load": loaded}
    outcome.notes.append(
        "from the patch returning (wall clock) to ReconcileRun.started_at of the first run "
        f"observing the new generation; load: the size of {LOAD_CRS} other CRs flipped 1↔2 at "
        f"{LOAD_RATE:.0f} patches/s"
    )
    if external.available(ENGINE_BENCH):
        outcome.rows += _engine_alone(bench)
        outcome.notes.append(
            "engine alone: bench/engine_latency.py with its toy controller, at its --quick size "
            "(20 samples per series; its full 200 take ~5 min, beyond this run's budget): "
            "`python -m bench.engine_latency` gives the full figures"
        )
    outcome.data |= {
        "idle": idle_s,
        "under_load": loaded_s,
        "load_patches_per_s": round(load_rate, 1),
    }
    return outcome


def _engine_alone(bench: Bench) -> list[Row]:
    """The engine's own figures (bench/engine_latency.py, with a toy controller)."""
    from bench import engine_latency

    figures = engine_latency.measure(quick=True, workdir=bench.workdir)
    rows = []
    for label, summary in figures.items():
        for p in ("p50_ms", "p99_ms"):
            judged = label.startswith("event") and label.endswith("idle")
            limit = {"p50_ms": 10, "p99_ms": 50}[p] if judged else None
            rows.append(Row(f"engine alone: {label} {p[:3]}", summary.get(p), "ms",
                            target=Target(limit) if limit else None))  # fmt: skip
        if summary.get("missed"):  # probes whose run was not seen within 10 s: not in p99
            rows.append(
                Row(f"engine alone: {label}, runs not seen in 10 s", summary["missed"], "n")
            )
    return rows


def _probe(stack: Stack, fleet: Fleet, count: int, *, pause: float) -> list[float]:
    samples = []
    for i in range(count):
        patched = stack.api.patch_memcached(stack.namespace, PROBE, {"spec": {"size": 2 - i % 2}})
        written = datetime.now(UTC)
        generation = patched["metadata"]["generation"]
        fleet.wait(functools.partial(fleet.spec_converged, PROBE, generation), 30)
        # The run's row is written when it ends, which may be just after its status write.
        deadline = time.monotonic() + 10
        while (started := first_run_started(stack.db, name=PROBE, generation=generation)) is None:
            if time.monotonic() > deadline:
                break
            time.sleep(0.02)
        if started is not None:
            # 0: the run started before this (busy) process had read the patch's response.
            samples.append(max((started - written).total_seconds(), 0.0))
        time.sleep(pause)
    return samples


def _load(
    stack: Stack, names: list[str], stop: threading.Event, patches: itertools.count[int]
) -> None:
    for i in itertools.count():
        if stop.wait(1 / LOAD_RATE):
            return
        stack.api.patch_memcached(stack.namespace, names[i % len(names)],
                                  {"spec": {"size": 1 + (i // len(names)) % 2}})  # fmt: skip
        next(patches)
