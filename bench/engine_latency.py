"""The reconcile engine's latency, idle and under load. Prints figures; never asserts.

    python -m bench.engine_latency [--quick]

1. Event to reconcile start (the issue's target: p50 ≤ 10 ms, p99 ≤ 50 ms idle): a size
   patch of a Memcached CR, to the start of the first run observing its generation — the
   watch delivery, the mirror write, the enqueue, Redis and a worker picking it up. This is
   bench/scenarios/latency.py, shared with `make bench`.
2. Enqueue to reconcile start: `reconcile_enqueue` (the UI's "Reconcile now") to the start
   of the run, i.e. the queue alone, without the watcher, idle and while other keys are
   being reconciled.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.report import table
from bench.runner import NAMESPACE, Bench, start_operator
from bench.scenarios import latency
from bench.stack import ROOT
from bench.stats import summary_ms

PROBE = "queue-probe"
LOAD_KEYS = 20

# Runs inside the stack's environment (its database and Redis), as a Django process.
_MEASURE = """
import json, sys, time
import django
django.setup()
from django.db.models import Max
from django.db.models.functions import Coalesce, Greatest
from controllers.base import Key
from opsboard.engine.dispatch import reconcile_enqueue
from opsboard.engine.models import ReconcileRun

namespace, probe, count, load = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
runs = ReconcileRun.objects.filter(namespace=namespace, name=probe)

def last_start():
    # A no-op run is folded into the previous one: its start is last_folded_at.
    row = runs.aggregate(at=Max(Greatest("started_at", Coalesce("last_folded_at", "started_at"))))
    return row["at"].timestamp() if row["at"] else 0.0

samples = []
for i in range(count):
    for j in range(load):  # other keys queued just before: the probe waits behind them
        reconcile_enqueue(key=Key("memcached", namespace, f"load-{j}"), trigger="manual")
    before = last_start()
    sent = time.time()
    reconcile_enqueue(key=Key("memcached", namespace, probe), trigger="manual")
    deadline = sent + 10
    while (started := last_start()) <= before and time.time() < deadline:
        time.sleep(0.001)
    samples.append(started - sent)
    time.sleep(0.05)
print(json.dumps(samples))
"""


def queue_latency(bench: Bench) -> dict[str, dict[str, float | int]]:
    count = bench.size(full=200, quick=10)
    with bench.stack("engine-queue") as stack:
        fleet, _ = start_operator(stack, "opsboard", workers=2)
        names = [PROBE, *(f"load-{i}" for i in range(LOAD_KEYS))]
        for name in names:
            stack.api.create_memcached(NAMESPACE, name, size=1)
        fleet.wait(lambda: all(fleet.ready(n, 1) for n in names), 120)
        figures = {}
        for label, load in (("idle", 0), (f"behind {LOAD_KEYS} other keys", LOAD_KEYS)):
            result = subprocess.run(
                [sys.executable, "-c", _MEASURE, NAMESPACE, PROBE, str(count), str(load)],
                cwd=ROOT,
                env={**stack.env, "DJANGO_SETTINGS_MODULE": "opsboard.settings"},
                capture_output=True,
                text=True,
                check=True,
            )
            figures[label] = summary_ms(json.loads(result.stdout.strip().splitlines()[-1]))
        return figures


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.engine_latency", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes: a first look")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="opsboard-engine-latency-"))
    try:
        bench = Bench(quick=args.quick, workdir=workdir, peer=False)
        print(table([latency.run(bench)], quick=args.quick))
        print("\nEnqueue (reconcile_enqueue) to reconcile start, Memcached, 2 worker processes")
        for label, figures in queue_latency(bench).items():
            print(f"  {label:<28} " + "  ".join(f"{k} {v}" for k, v in figures.items()))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
