"""`python -m bench --quick` end to end: every scenario runs at a tiny size against its
own kubesim, redis, workers, watcher, web and kopf peer, and writes sane JSON and plots.

Figures are checked for shape and sign only: timings are reported, never asserted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
MEASURED = ["kubesim", "patch", "latency", "coldstart", "cost", "ui", "heal"]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path, str]:
    out = tmp_path_factory.mktemp("bench-results")
    env = {k: v for k, v in os.environ.items() if k not in {"KUBECONFIG", "REDIS_URL"}}
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((out / "results.json").read_text()), out, done.stdout


pytestmark = pytest.mark.timeout(600)


def test_the_table_names_the_machine_and_every_scenario(results):
    _, _, printed = results
    assert f"{os.cpu_count()} CPUs" in printed
    for name in MEASURED:
        assert f"[{name}]" in printed


def test_every_scenario_ran_and_reports_rows(results):
    document, _, _ = results
    assert document["quick"] is True
    assert document["machine"]["cpus"] == os.cpu_count()
    for name in MEASURED:
        scenario = document["scenarios"][name]
        assert scenario["error"] is None, scenario["data"].get("traceback")
        assert scenario["rows"], name


def test_every_figure_is_a_non_negative_number(results):
    document, _, _ = results
    for name in MEASURED:
        for row in document["scenarios"][name]["rows"]:
            assert isinstance(row["value"], int | float), (name, row)
            assert row["value"] >= 0, (name, row)
            if row["peer"] is not None:
                assert row["peer"] >= 0, (name, row)


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
