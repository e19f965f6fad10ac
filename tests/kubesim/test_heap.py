"""`kubesim serve` freezes what its start-up loaded; a KubeSim in a test's process does not."""

from __future__ import annotations

from pathlib import Path

from tests.support.probe import probe

# The CLI in the probe's main thread (it installs signal handlers), watched from another,
# which stops it with the SIGTERM a supervisor would send. The server prints its URL just
# after the freeze: its lines go to stderr, so that the watch's cannot land inside one.
_SERVED = """
import gc, json, os, signal, sys, threading, time
from kubesim import cli

out, sys.stdout = sys.stdout, sys.stderr

def watch():
    deadline = time.time() + 30
    while gc.get_freeze_count() == 0 and time.time() < deadline:
        time.sleep(0.05)
    print(json.dumps({"frozen": gc.get_freeze_count()}), file=out, flush=True)
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


def test_the_served_process_freezes_its_start_up(tmp_path: Path) -> None:
    assert probe(_SERVED, str(tmp_path))["frozen"] > 20_000  # modules, schemas, policy


def test_a_kubesim_in_a_test_s_process_leaves_its_collector_alone(tmp_path: Path) -> None:
    assert probe(_IN_PROCESS, str(tmp_path))["frozen"] == 0
