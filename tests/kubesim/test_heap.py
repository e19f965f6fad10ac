"""`kubesim serve` freezes what its start-up loaded; a KubeSim in a test's process does not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

# The CLI in the probe's main thread (it installs signal handlers), watched from another,
# which stops it with the SIGTERM a supervisor would send.
_SERVED = """
import gc, json, os, signal, sys, threading, time
from kubesim import cli

def watch():
    deadline = time.time() + 30
    while gc.get_freeze_count() == 0 and time.time() < deadline:
        time.sleep(0.05)
    print(json.dumps({"frozen": gc.get_freeze_count()}), flush=True)
    os.kill(os.getpid(), signal.SIGTERM)

threading.Thread(target=watch, daemon=True).start()
cli.main(["serve", "--port", "0", "--data-dir", sys.argv[1], "--no-cluster"])
"""

_IN_PROCESS = """
import gc, json, sys
from kubesim.server import KubeSim
sim = KubeSim(port=0, data_dir=sys.argv[1], cluster=False).start()
print(json.dumps({"frozen": gc.get_freeze_count()}), flush=True)
sim.stop()
"""


def _probe(code: str, data_dir: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", code, str(data_dir)], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=60, check=True,
    )  # fmt: skip
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    found: dict[str, Any] = json.loads(lines[-1])
    return found


def test_the_served_process_freezes_its_start_up(tmp_path: Path) -> None:
    assert _probe(_SERVED, tmp_path)["frozen"] > 20_000  # modules, schemas, policy


def test_a_kubesim_in_a_test_s_process_leaves_its_collector_alone(tmp_path: Path) -> None:
    assert _probe(_IN_PROCESS, tmp_path)["frozen"] == 0
