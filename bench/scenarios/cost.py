"""Scenario 4, cost: API requests per no-op reconcile and per size change (kubesim's
request log; on a real server its own count of the operator's requests), reconciles and
API writes per minute of a converged fleet between resyncs, and the peak memory of each
process.

A no-op reconcile is provoked by touching an annotation of a converged CR: an
event that must make each operator look and find nothing to do. A size change
is counted until the CR is ready again, plus a second for stragglers.
"""

from __future__ import annotations

import functools
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from bench.fleet import Fleet, create_many
from bench.report import Outcome, Row, Target
from bench.requestlog import NOT_COUNTED, Asked, RequestMeter
from bench.runner import Bench, check_pod_room, expect, start_operator
from bench.runs import reconciles_total, runs_by_cause
from bench.stack import Stack

SETTLE = 1.0  # seconds to let late requests of one change land in the log


def run(bench: Bench) -> Outcome:
    count = bench.crs or bench.size(full=1000, quick=20)  # the cold start's fleet, as kept
    idle_window = bench.size(full=30, quick=3)
    probes = bench.size(full=10, quick=2)
    outcome = Outcome("cost", f"Cost with {count:,} converged CRs")
    figures: dict[str, dict[str, Any]] = {}
    # The peer first: its stack is gone before opsboard's fleet, kept for the next
    # scenarios, holds its pods (a real cluster may have room for one fleet only).
    for operator in reversed(bench.operators()):
        figures[operator] = _measure(bench, operator, count, idle_window, probes)

    ours, peer = figures["opsboard"], figures.get("kopf", {})
    rows = [
        ("requests per no-op reconcile", "noop_requests", Target(0)),
        ("writes per no-op reconcile", "noop_writes", Target(0)),
        ("requests per size change", "size_requests", None),
        ("writes per size change, Events included", "size_writes", Target(4)),  # issue 16
        ("writes per size change, Events aside", "size_writes_no_events", None),
        ("reconciles per minute, converged fleet", "idle_reconciles_per_min", None),
        ("API writes per minute, converged fleet", "idle_writes_per_min", None),
        ("API requests per minute, converged fleet", "idle_requests_per_min", None),
        ("leader election (Lease) requests per minute", "lease_requests_per_min", None),
    ]
    for metric, key, target in rows:
        outcome.rows.append(Row(metric, ours.get(key), "n", peer.get(key), target))
    for role, mb in sorted(ours["peak_rss_mb"].items()):
        if role != "kubesim":
            outcome.rows.append(Row(f"peak RSS {role} at {count:,} CRs", mb, "MB"))
    if peer:
        outcome.rows.append(Row(f"peak RSS kopf (one process) at {count:,} CRs",
                                peer["peak_rss_mb"].get("kopf"), "MB"))  # fmt: skip
    outcome.bars["writes per size change"] = {
        op: float(figures[op]["size_writes"] or 0) for op in bench.operators()
    }
    outcome.notes.append(
        f"no-op: {probes} annotation touches on converged CRs, {SETTLE:.0f} s window each; "
        f"size change: {probes} CRs 1→2, counted until ready + {SETTLE:.0f} s; idle window "
        f"{idle_window} s with no beat running (resync is every 10 min); requests exclude watches "
        "and the bench's own calls; writes = create/update/patch/delete, Events included"
    )
    outcome.notes.append(
        "kopf is one process, watcher and worker at once; opsboard's processes are listed apart"
        + (
            "; measured on the fleets the cold-start scenario left converged (peak RSS includes "
            "that cold start)"
            if ours.get("fleet_from_coldstart")
            else ""
        )
    )
    if bench.kubeconfig:
        outcome.notes.append(
            "requests: the API server's own count of each operator's, which signs in as a "
            "ServiceAccount whose requests FlowSchemas sort by kind (bench/flowschemas.py)"
            if ours["size_writes"] is not None
            else f"requests: {NOT_COUNTED}"
        )
    for operator, f in figures.items():
        if f["crs"] != count:
            outcome.notes.append(f"{operator} measured on {f['crs']:,} CRs, the room the "
                                 "cluster had left beside a kept fleet")  # fmt: skip
    if causes := ours.get("idle_runs_by_cause"):
        top = ", ".join(f"{n} x {cause}" for cause, n in list(causes.items())[:4])
        outcome.notes.append(f"opsboard's runs recorded in the idle window, by cause: {top}")
    outcome.data = {"crs": count, "idle_window_s": idle_window, "figures": figures}
    return outcome


def _measure(
    bench: Bench, operator: str, count: int, idle_window: int, probes: int
) -> dict[str, Any]:
    kept = bench.reuse(operator)  # the cold-start scenario's converged fleet, if it ran
    stack, fleet = kept or (bench.stack(f"cost-{operator}"), None)
    try:
        if fleet is None and stack.external is not None:
            # The cold start's kept fleet holds its pods meanwhile: a fleet of what room is
            # left, less a warm-up and a second pod for each size change (what is counted
            # is per change, not per fleet).
            count = min(count, stack.api.pod_room() - 1 - probes)
            check_pod_room(stack.api, max(count, 2 * probes) + 1 + probes,
                           f"{max(count, 2 * probes)} CRs of one pod, a warm-up and a second "
                           f"pod for each of {probes} size changes (give a smaller --crs)")  # fmt: skip
        names = [f"mc-{i:05d}" for i in range(count)]
        if fleet is None:
            fleet = start_operator(stack, operator, workers=2, pods=count + 150)
            create_many(stack.api, stack.namespace, names, size=1)
        expect(fleet, lambda: len(fleet.ready_ok) >= count + 1, 300,
               f"{operator}: all {count:,} CRs ready before the costs")  # fmt: skip
        time.sleep(2 * SETTLE)
        result = _costs(stack, fleet, operator, names, idle_window, probes)
        result["fleet_from_coldstart"] = kept is not None
        result["crs"] = count
    except BaseException:
        stack.stop()
        raise
    if operator == "opsboard":
        bench.keep(operator, stack, fleet)  # for the UI scenario
    else:
        stack.stop()
    return result


def _costs(
    stack: Stack, fleet: Fleet, operator: str, names: list[str], idle_window: int, probes: int
) -> dict[str, Any]:
    meter = RequestMeter(stack).start()
    runs_before = reconciles_total(stack.db) if operator == "opsboard" else None
    window_start = datetime.now(UTC)
    time.sleep(idle_window)
    idle = meter.stop()
    per_minute = 60 / idle_window
    result: dict[str, Any] = {
        "idle_requests_per_min": None if idle is None else round(idle.requests * per_minute, 1),
        "idle_writes_per_min": None if idle is None else round(idle.writes * per_minute, 1),
        "lease_requests_per_min": None if idle is None else round(idle.leases * per_minute, 1),
        "idle_calls": None if idle is None else idle.calls,
        "idle_reconciles_per_min": None
        if runs_before is None
        else round((reconciles_total(stack.db) - runs_before) * per_minute, 1),
        "idle_runs_by_cause": None
        if runs_before is None
        else runs_by_cause(stack.db, since=window_start),
    }
    result |= _noop(stack, names[:probes])
    result |= _size_change(stack, fleet, names[probes : 2 * probes])
    result["peak_rss_mb"] = {k: round(v, 1) for k, v in stack.rss.peak_mb.items()}
    return result


def _noop(stack: Stack, names: list[str]) -> dict[str, Any]:
    asked: list[Asked | None] = []
    for i, name in enumerate(names):
        meter = RequestMeter(stack).start()
        stack.api.patch_memcached(stack.namespace, name,
                                  {"metadata": {"annotations": {"bench/touch": str(i)}}})  # fmt: skip
        time.sleep(SETTLE)
        asked.append(meter.stop())
    return {
        "noop_requests": _mean(asked, lambda a: a.requests),
        "noop_writes": _mean(asked, lambda a: a.writes),
        "noop_calls": _mean_calls(asked),
    }


def _size_change(stack: Stack, fleet: Fleet, names: list[str]) -> dict[str, Any]:
    asked: list[Asked | None] = []
    for name in names:
        meter = RequestMeter(stack).start()
        patched = stack.api.patch_memcached(stack.namespace, name, {"spec": {"size": 2}})
        generation = patched["metadata"]["generation"]
        # unconverged, its writes would be counted short
        expect(fleet, functools.partial(fleet.ready, name, generation), 60,
               f"{name} ready at generation {generation} after its size change")  # fmt: skip
        time.sleep(SETTLE)
        asked.append(meter.stop())
    writes = _mean(asked, lambda a: a.writes)
    events = _mean(asked, lambda a: a.event_writes)
    return {
        "size_writes_no_events": None
        if writes is None or events is None
        else round(writes - events, 2),
        "size_requests": _mean(asked, lambda a: a.requests),
        "size_writes": writes,
        "size_calls": _mean_calls(asked),
    }


def _mean(asked: list[Asked | None], figure: Callable[[Asked], int]) -> float | None:
    """The mean of one figure over the probes; None where the server did not count them."""
    if (counted := _all_counted(asked)) is None:
        return None
    return round(sum(map(figure, counted)) / len(counted), 2)


def _mean_calls(asked: list[Asked | None]) -> dict[str, float] | None:
    if (counted := _all_counted(asked)) is None:
        return None
    calls: Counter[str] = Counter()
    for a in counted:
        calls.update(a.calls)
    return {k: round(v / len(counted), 2) for k, v in calls.most_common()}


def _all_counted(asked: list[Asked | None]) -> list[Asked] | None:
    counted = [a for a in asked if a is not None]
    return counted if asked and len(counted) == len(asked) else None
