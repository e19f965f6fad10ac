"""`python -m bench --quick` end to end: every scenario runs at a tiny size against its
own kubesim, redis, workers, watcher, web and kopf peer, and writes sane JSON and plots.

Figures are checked for shape and sign only: timings are reported, never asserted.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import trace

ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT = 900  # seconds: a quick run takes 3 min on 2 idle CPUs, 8 min on 2 busy ones
MEASURED = ["kubesim", "patch", "latency", "coldstart", "cost", "idle", "ui", "heal"]
# Rows each scenario must produce (metric names start so): what the run is for.
EXPECTED_ROWS = {
    "kubesim": ["GET one object p50", "write (merge patch) p50", "watch delivery", "LIST of",
                "RSS with"],
    "patch": ["replicas + observedGeneration p50", "status.nodes right p50",
              "readyReplicas = size p50", "floor (Deployment patched directly)",
              "replicas + observedGeneration p50: opsboard ÷ kopf"],
    "latency": ["Memcached: event -> start, idle p50", "Memcached: under load",
                "engine alone: event -> start, idle p50", "engine alone: enqueue -> start"],
    "coldstart": ["opsboard, 2 workers: all converged", "opsboard, 2 workers: all ready",
                  "opsboard, 2 workers: reconciles", "opsboard, 2 workers: operator CPU-ms",
                  "floor (Deployments created directly)", "all ready: opsboard (2 workers) ÷ kopf"],
    "cost": ["requests per no-op reconcile", "writes per size change", "peak RSS watcher",
             "peak RSS kopf"],
    "idle": ["whole product, CPU over", "  worker (pool", "  redis-server", "browser (chromium",
             "overview polls", "API requests in the window"],
    "ui": ["detail (10 pods) p50", "list at 20 p50", "list at 100 p50", "peak RSS web",
           "peak RSS worker (one pool process) at 100 CRs"],
    "heal": ["Service deleted", "Deployment deleted", "Service selector edited"],
}  # fmt: skip


# Session-scoped: under xdist the group's tests may reach their worker between others',
# and a module-scoped fixture would then run the whole bench again for the next one.
@pytest.fixture(scope="session")
def results(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path, str]:
    out = tmp_path_factory.mktemp("bench-results")
    env = {k: v for k, v in os.environ.items() if k not in {"KUBECONFIG", "REDIS_URL"}}
    bench = subprocess.Popen(
        [sys.executable, "-m", "bench", "--quick", "--trace", "--out", str(out)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    outcome = f"did not finish within {RUN_TIMEOUT} s"
    try:
        stdout, stderr = bench.communicate(timeout=RUN_TIMEOUT)
        outcome = f"exited {bench.returncode}"
    except subprocess.TimeoutExpired:
        pass
    finally:
        if bench.poll() is None:  # SIGTERM: bench unwinds like Ctrl-C, stops its stacks,
            bench.terminate()  # and prints the logs of the scenario it was running
            stdout, stderr = bench.communicate(timeout=60)
    told = f"\n--- stderr (end)\n{stderr[-8000:]}\n--- stdout (end)\n{stdout[-2000:]}"
    # Exit 1 says a scenario could not run: the tests below say which, and why.
    assert outcome in ("exited 0", "exited 1"), f"python -m bench --quick {outcome}{told}"
    document = json.loads((out / "results.json").read_text())
    failed = [name for name, s in document["scenarios"].items() if s["error"] is not None]
    assert outcome == ("exited 1" if failed else "exited 0"), (failed, told)
    return document, out, stdout


def explain(scenario: dict[str, Any]) -> str:
    """Everything a failed scenario left: its error and traceback, the tails of its
    processes' logs, its notes and load: a failure on CI must explain itself."""
    data = scenario["data"]
    parts = [f"scenario {scenario['name']}: error {scenario['error']!r}"]
    if data.get("traceback"):
        parts.append(data["traceback"])
    for path, tail in (data.get("logs") or {}).items():
        parts.append(f"--- {path} (end)\n{tail}")
    parts += [f"note: {note}" for note in scenario["notes"]]
    parts.append(f"load average: {data.get('load_average')}, took {scenario['seconds']} s")
    rows = [(r["metric"], r["value"], r["peer"]) for r in scenario["rows"]]
    parts.append(f"rows: {rows}")
    return "\n".join(parts)


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


# One bench run serves every test here: under xdist they all go to the worker that runs it.
pytestmark = [pytest.mark.timeout(RUN_TIMEOUT + 120), pytest.mark.xdist_group("bench-smoke")]


def test_the_table_names_the_machine_and_every_scenario(results):
    _, _, printed = results
    assert f"{os.cpu_count()} CPUs" in printed
    for name in MEASURED:
        assert f"[{name}]" in printed


def test_every_scenario_ran_and_reports_rows(results):
    document, _, _ = results
    assert document["quick"] is True
    assert document["machine"]["cpus"] == os.cpu_count()
    assert set(MEASURED) <= set(document["scenarios"])
    for name in MEASURED:
        scenario = document["scenarios"][name]
        assert scenario["error"] is None, explain(scenario)
        metrics = [row["metric"] for row in scenario["rows"]]
        for expected in EXPECTED_ROWS[name]:
            assert any(m.startswith(expected) for m in metrics), (expected, explain(scenario))


def test_every_figure_is_a_non_negative_number(results):
    document, _, _ = results
    for name in MEASURED:
        scenario = document["scenarios"][name]
        for row in scenario["rows"]:
            assert is_number(row["value"]) and row["value"] >= 0, (row, explain(scenario))
            if row["peer"] is not None:
                assert is_number(row["peer"]) and row["peer"] >= 0, (row, explain(scenario))


def test_the_peer_ran_beside_opsboard_in_patch_coldstart_and_cost(results):
    document, _, _ = results
    figures = document["scenarios"]["patch"]["data"]["figures"]
    assert figures["kopf"]["spec"]["n"] > 0
    assert figures["opsboard"]["spec"]["n"] > 0
    assert "kopf" in document["scenarios"]["coldstart"]["data"]["runs"]
    costs = document["scenarios"]["cost"]["data"]["figures"]
    assert {"opsboard", "kopf"} <= set(costs)
    for figures in costs.values():
        for key in ("noop_requests", "noop_writes", "size_requests", "size_writes"):
            assert figures[key] >= 0


def test_the_patch_trace_follows_every_patch_through_opsboards_processes(results):
    document, out, _ = results
    figures = document["scenarios"]["patch"]["data"]["figures"]["opsboard"]
    phases, patches = figures["trace"], figures["spec"]["n"]
    assert (out / "patch-trace.txt").is_file()
    # Every phase found: the marks of the watcher, a pool process's consumer and run, and
    # the run's two writes all reached the file. (Not for every patch: a run begun a moment
    # before the watcher's mark may read the new generation, and write, itself.)
    assert set(phases) == {label for label, _, _ in trace.PHASES}, explain_patch(document)
    assert all(phase["n"] >= 1 for phase in phases.values()), phases
    # The whole, from the bench's two marks, is the patch's own figure, read another way.
    whole = phases["in all: the bench's clock start → converged (its figure)"]
    assert whole["n"] == patches
    assert whole["p50_ms"] == pytest.approx(figures["spec"]["p50_ms"], abs=0.01)


def explain_patch(document: dict[str, Any]) -> str:
    return explain(document["scenarios"]["patch"])


def test_targets_carry_a_verdict(results):
    document, _, _ = results
    verdicts = [
        row["verdict"]
        for scenario in document["scenarios"].values()
        for row in scenario["rows"]
        if row["target"]
    ]
    assert verdicts
    assert all(v == "met" or v.startswith(("MISSED by", "not measured")) for v in verdicts)


def test_plots_are_png_files(results):
    _, out, _ = results
    plots = list(out.glob("*.png"))
    assert {"patch.png", "latency.png"} <= {p.name for p in plots}
    for plot in plots:
        assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
