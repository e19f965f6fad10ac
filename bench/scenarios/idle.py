"""Scenario: idle. The converged fleet with every process `make run` starts — the watcher,
the Celery worker (main and pool processes, started with the launcher's arguments) and
beat, gunicorn, redis-server — and a chromium tab logged in on the overview, whose htmx
fragment polls every 5 s while visible: that polling is part of what is counted.

Reports the CPU of all product processes over the window in % of one core (psutil user +
system, reaped children included), the split per process, the browser's own CPU apart
(it is not the product), and the API requests the product made in the window: kubesim's
request log; on a real cluster the API server's own count of the product's requests
(bench.flowschemas).
"""

from __future__ import annotations

import psutil

from bench.browser import overview_tab
from bench.cpu import CpuWindow, tree
from bench.fleet import create_many
from bench.report import Outcome, Row, Target
from bench.requestlog import NOT_COUNTED, RequestMeter
from bench.runner import Bench, check_fleet_room, expect, start_operator
from bench.runs import reconciles_total
from bench.stack import Stack

PRODUCT = ("watcher", "worker", "beat", "web")
BROWSER = "browser (chromium + Playwright driver)"
TARGET_PERCENT = 2.0


def run(bench: Bench) -> Outcome:
    count = bench.crs or bench.size(full=1000, quick=20)  # the cold start's fleet, as kept
    window = bench.size(full=300, quick=20)
    settle = bench.size(full=20, quick=5)  # the new worker's start-up, the page's first polls
    outcome = Outcome("idle", f"Idle: {count:,} converged CRs, a browser on the overview")
    kept = bench.reuse("opsboard")  # the fleet the cold-start and cost scenarios left
    stack, fleet = kept or (bench.stack("idle"), None)
    try:
        if fleet is None and stack.external is not None:
            check_fleet_room(stack.api, count)
        if fleet is None:
            fleet = start_operator(stack, "opsboard", workers=2, pods=count + 150)
            create_many(stack.api, stack.namespace, [f"mc-{i:05d}" for i in range(count)],
                        size=1)  # fmt: skip
        expect(fleet, lambda: len(fleet.ready_ok) >= count + 1, 300,
               f"all {count:,} CRs ready before the idle window")  # fmt: skip
        stack.retire("worker")
        stack.start_worker(2, as_make_run=True)
        stack.start_beat()
        if not stack.web_url:
            stack.start_web()
        with overview_tab(stack) as tab:
            tab.stay(settle)
            visibility = tab.visibility()
            requests = RequestMeter(stack).start()
            runs_before = reconciles_total(stack.db)
            del tab.htmx_requests[:]
            meter = CpuWindow(lambda: _groups(stack) | {BROWSER: tab.processes()}).start()
            tab.stay(window)
            elapsed, used, processes = meter.stop()
            polls = len(tab.htmx_requests)
        runs = reconciles_total(stack.db) - runs_before
        asked = requests.stop()
        stack.retire("beat")  # the UI scenario measures without it, as before
    except BaseException:
        stack.stop()
        raise
    bench.keep("opsboard", stack, fleet)  # for the UI scenario

    percent = {label: round(100 * cpu / elapsed, 2) for label, cpu in used.items()}
    product = round(sum(v for k, v in percent.items() if k != BROWSER), 2)
    outcome.rows.append(Row(f"whole product, CPU over {window} s", product, "% of a core",
                            target=Target(TARGET_PERCENT)))  # fmt: skip
    for label, value in percent.items():
        if label != BROWSER:
            many = f", {processes[label]} processes" if label.endswith("(pool)") else ""
            outcome.rows.append(Row(f"  {label}{many}", value, "% of a core"))
    outcome.rows.append(Row(f"{BROWSER}, apart", percent.get(BROWSER), "% of a core"))
    outcome.rows.append(Row("overview polls (htmx) in the window", polls, "n"))
    outcome.rows.append(Row("reconciles in the window", runs, "n"))
    requests_made, leases, calls = (
        (None, None, None) if asked is None else (asked.requests, asked.leases, asked.calls)
    )
    outcome.rows.append(Row("API requests in the window, leader election aside",
                            requests_made, "n", target=Target(0)))  # fmt: skip
    outcome.rows.append(Row("leader election (Lease) requests in the window", leases, "n"))
    outcome.notes.append(
        f"CPU: psutil user + system of every process (reaped children included) over "
        f"{elapsed:.0f} s, after {settle} s to settle; worker started with `make run`'s "
        "arguments (gossip, mingle, heartbeat on; log level WARNING), beat with its 10-min "
        f"resync (not due in the window); the tab's visibilityState was {visibility!r}, "
        "so the overview polled; the browser is not the product and is given apart"
    )
    if asked is None:
        outcome.notes.append(f"API requests: {NOT_COUNTED}")
    elif calls:
        outcome.notes.append(f"API requests in the window: {calls}")
    if kept is None:
        outcome.notes.append(f"no fleet was handed over: {count:,} CRs built for this scenario")
    outcome.data = {
        "crs": count,
        "window_s": round(elapsed, 1),
        "cpu_percent": percent,
        "cpu_seconds": {k: round(v, 3) for k, v in used.items()},
        "processes": processes,
        "product_cpu_percent": product,
        "overview_polls": polls,
        "visibility": visibility,
        "reconciles": runs,
        "api_calls": calls,
        "lease_requests": leases,
        "fleet_from_coldstart": kept is not None,
    }
    return outcome


def _groups(stack: Stack) -> dict[str, list[psutil.Process]]:
    """The product's processes by what they are: a worker or web server as its main
    process and its pool (summed), redis-server on its own."""
    groups: dict[str, list[psutil.Process]] = {}
    for proc in stack.processes:
        if proc.role not in PRODUCT:
            continue
        procs = tree(proc.popen.pid)
        if proc.role in {"worker", "web"} and procs:
            groups[f"{proc.role} (main)"] = procs[:1]
            groups[f"{proc.role} (pool)"] = procs[1:]
        else:
            groups[proc.role] = procs
    if stack.redis and stack.redis.process:
        groups["redis-server"] = tree(stack.redis.process.pid)
    return groups
