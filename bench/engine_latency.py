"""The reconcile engine's own latency, idle and under load. Prints figures; never asserts.

    python -m bench.engine_latency [--quick]

The engine alone, with the tiny Toy controller of tests/engine (one ConfigMap per CR),
so an operator's own API calls do not blur the figure (bench/scenarios/latency.py measures
the same with the Memcached operator, and carries this output along):

- event → start: a spec patch of a probe CR returning, to the start of the first reconcile
  observing its generation: watch delivery, mirror write, enqueue, Redis, a worker. The
  target (issue 5): p50 ≤ 10 ms, p99 ≤ 50 ms on an idle system.
- enqueue → start: `reconcile_enqueue` (the UI's "Reconcile now") to the run's start: the
  queue alone, without the watcher.

"Under load", other CRs' specs are patched at a steady rate while the probe is measured.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.stack import ROOT, Stack
from bench.stats import summary_ms

LOAD_CRS = 20
LOAD_RATE = 10.0  # spec patches per second of the other CRs: well within what 2 workers sustain

# Runs as a Django process of the stack (its database, its Redis, its cluster).
_MEASURE = r"""
import json, sys, threading, time
import django
django.setup()
from django.conf import settings
from django.db.models import Max
from controllers.base import Key
from controllers.kube import ApiKube, Conflict, load_api_client
from opsboard.engine.enqueue import reconcile_enqueue
from opsboard.engine.models import ReconcileRun
from tests.engine.toy import CRD, TOY, toy

count, load_crs, load_rate = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
ns = "default"
api = ApiKube(load_api_client(kubeconfig=settings.KUBECONFIG, context=settings.KUBE_CONTEXT))
try:
    api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body=CRD)
except Conflict:
    pass
names = ["probe", *(f"load-{i}" for i in range(load_crs))]
deadline = time.time() + 30
for name in names:
    while True:
        try:
            api.create(TOY, toy(name, ns))
            break
        except Conflict:  # a retried create that had gone through
            break
        except Exception:
            if time.time() > deadline:
                raise
            time.sleep(0.1)
# Every CR reconciled once: the watcher and the workers are up (a dead one fails, not hangs).
deadline = time.time() + 120
while ReconcileRun.objects.filter(name__in=names).values("name").distinct().count() < len(names):
    if time.time() > deadline:
        raise TimeoutError(f"not every one of {len(names)} Toy CRs was reconciled within 120 s")
    time.sleep(0.05)
time.sleep(1.0)

def wait_start(name, generation=None, after=0.0):
    runs = ReconcileRun.objects.filter(name=name)
    end = time.time() + 10
    while time.time() < end:
        if generation is not None:
            row = runs.filter(generation__gte=generation).order_by("started_at").first()
            if row:
                return row.started_at.timestamp()
        else:  # a no-op run folds into the previous one: its start is last_folded_at
            at = runs.aggregate(s=Max("started_at"), f=Max("last_folded_at"))
            latest = max(t.timestamp() for t in (at["s"], at["f"]) if t)
            if latest > after:
                return latest
        time.sleep(0.001)
    raise TimeoutError(name)

def event_probe(i):
    # From before the request: the server may deliver the watch event, and the run start,
    # before its reply reaches a busy bench process (that made this figure negative).
    sent = time.time()
    patched = api.patch(TOY, ns, "probe", {"spec": {"size": 2 + i}})
    return wait_start("probe", generation=patched["metadata"]["generation"]) - sent

def enqueue_probe(i):
    before = wait_start("probe", after=0.0)
    sent = time.time()
    reconcile_enqueue(key=Key("toy", ns, "probe"), trigger="manual")
    return wait_start("probe", after=max(before, sent - 1e-6)) - sent

def loader(stop):
    i = 0
    while not stop.wait(1.0 / load_rate):
        i += 1
        api.patch(TOY, ns, f"load-{i % load_crs}", {"spec": {"size": 100 + i}})

out, missed = {}, {}
for label, probe in (("event", event_probe), ("enqueue", enqueue_probe)):
    for mode in ("idle", "under load"):
        stop = threading.Event()
        if mode == "under load":
            threading.Thread(target=loader, args=(stop,), daemon=True).start()
        samples, late = [], 0
        for i in range(count):
            try:
                samples.append(probe(i + 1000 * (mode == "under load")))
            except TimeoutError:  # one run not seen within 10 s: counted, not fatal
                late += 1
            time.sleep(0.05)
        stop.set()
        out[f"{label} -> start, {mode}"] = samples
        missed[f"{label} -> start, {mode}"] = late
        time.sleep(1.0)
print(json.dumps({"samples": out, "missed": missed}))
"""


def measure(*, quick: bool, workdir: Path) -> dict[str, dict[str, float | int]]:
    with Stack(workdir, name="engine-latency") as stack:
        stack.start_cluster()
        stack.env["OPSBOARD_CONTROLLERS"] = "tests.engine.toy"
        stack.env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])
        )
        stack.start_opsboard(workers=2)
        count = 20 if quick else 200
        result = subprocess.run(
            [sys.executable, "-c", _MEASURE, str(count), str(LOAD_CRS), str(LOAD_RATE)],
            cwd=ROOT,
            env={**stack.env, "DJANGO_SETTINGS_MODULE": "opsboard.settings"},
            capture_output=True,
            text=True,
            timeout=600,
        )
        if result.returncode != 0:
            raise RuntimeError(f"measurement failed:\n{result.stderr[-2000:]}")
        printed = json.loads(result.stdout.strip().splitlines()[-1])
        return {
            label: summary_ms(values) | {"missed": printed["missed"][label]}
            for label, values in printed["samples"].items()
        }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.engine_latency", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="20 samples instead of 200")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="opsboard-engine-latency-"))
    try:
        figures = measure(quick=args.quick, workdir=workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"engine latency, Toy controller, 2 worker processes, {os.cpu_count()} CPUs; "
        f"load: {LOAD_CRS} other CRs patched at {LOAD_RATE:.0f}/s"
    )
    for label, summary in figures.items():
        print(f"{label:<28} " + "  ".join(f"{k} {v}" for k, v in summary.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
