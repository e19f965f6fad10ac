"""Where a cold start's CPU goes, process by process. Prints figures; never asserts.

    python -m bench.cpu_profile [--crs N] [--pool prefork|threads] [--py-spy DIR]
                                [--kubeconfig FILE] [--postgres]

N Memcached CRs (default 1,000) created at once on kubesim (or on the cluster of FILE) with
opsboard's watcher and 2 workers, as the cold-start scenario does; then the CPU (user +
system) of the watcher, the worker's main process and each pool process from the first
create to all ready, per CR, and kubesim's (or PostgreSQL's) apart; on SQLite, also the
reconciles per CR and what caused them. With --py-spy DIR
(py-spy on PATH), every one of those processes and kubesim is also sampled, and DIR gets one
collapsed-stack file per process (flame-graph input). Only the thread holding the GIL is
sampled (py-spy's --gil): where the CPU goes, not where threads wait on a socket.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import psutil

from bench.fleet import create_many
from bench.runner import Bench, start_operator
from bench.runs import reconciles_total, runs_by_cause
from bench.stack import Process


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.cpu_profile", description=__doc__)
    parser.add_argument("--crs", type=int, default=1000)
    parser.add_argument("--pool", choices=("prefork", "threads"), default="prefork")
    parser.add_argument("--py-spy", type=Path, metavar="DIR", dest="spy")
    parser.add_argument("--kubeconfig", type=Path, help="a real cluster instead of kubesim")
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL instead of SQLite")
    args = parser.parse_args()
    kubeconfig = args.kubeconfig.resolve() if args.kubeconfig else None
    workdir = Path(tempfile.mkdtemp(prefix="opsboard-cpu-"))
    stack = Bench(quick=False, workdir=workdir, pool=args.pool, kubeconfig=kubeconfig).stack("cpu")
    if args.postgres:
        stack.use_postgres()
    try:
        fleet = start_operator(stack, "opsboard", workers=2, pods=args.crs + 10)
        processes = _processes(stack.processes)
        spied = {**processes, **_server(stack.processes)}
        spies = _spies(spied, args.spy) if args.spy else []
        before = {role: _cpu(p) for role, p in processes.items()}
        server_before = stack.cpu_seconds("kubesim")
        database_before = stack.postgres_cpu_seconds()
        start, since = time.perf_counter(), datetime.now(UTC)
        create_many(stack.api, stack.namespace, [f"mc-{i:05d}" for i in range(args.crs)], size=1)
        ready = fleet.wait(lambda: len(fleet.ready_ok) >= args.crs + 1, 600)
        used = {role: _cpu(p) - before[role] for role, p in processes.items()}
        runs = (
            None
            if args.postgres
            else (reconciles_total(stack.db), runs_by_cause(stack.db, since=since))
        )
        server = stack.cpu_seconds("kubesim") - server_before
        database = stack.postgres_cpu_seconds() - database_before
        for spy in spies:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)
    finally:
        stack.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    took = f"{ready - start:.1f} s" if ready else "not within 600 s"
    print(f"{args.crs:,} CRs, 2 workers ({args.pool}), all ready: {took}")
    for role, seconds in used.items():
        print(f"  {role:<22} {seconds * 1000 / args.crs:6.1f} CPU-ms per CR")
    print(f"  {'operator total':<22} {sum(used.values()) * 1000 / args.crs:6.1f} CPU-ms per CR")
    if kubeconfig is None:  # a real cluster's processes are not ours to measure
        print(f"  {'kubesim (apart)':<22} {server * 1000 / args.crs:6.1f} CPU-ms per CR")
    if args.postgres:
        print(f"  {'PostgreSQL (apart)':<22} {database * 1000 / args.crs:6.1f} CPU-ms per CR")
    if runs is not None:  # fewer runs is the first lever: what caused them
        total, causes = runs
        print(f"reconciles: {total / (args.crs + 1):.2f} per CR; run log rows by cause:")
        for cause, count in list(causes.items())[:8]:
            print(f"  {count:6d}  {cause}")


def _processes(started: list[Process]) -> dict[str, psutil.Process]:
    found: dict[str, psutil.Process] = {}
    for proc in started:
        if proc.role not in ("watcher", "worker"):
            continue
        parent = psutil.Process(proc.popen.pid)
        found[proc.role if proc.role == "watcher" else "worker (main)"] = parent
        for i, child in enumerate(parent.children(recursive=True)):
            found[f"worker (pool {i + 1})"] = child
    return found


def _server(started: list[Process]) -> dict[str, psutil.Process]:
    """kubesim, sampled with the rest but measured apart (it is the server, not ours)."""
    return {p.role: psutil.Process(p.popen.pid) for p in started if p.role == "kubesim"}


def _cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def _spies(processes: dict[str, psutil.Process], out: Path) -> list[subprocess.Popen[bytes]]:
    binary = shutil.which("py-spy")
    if binary is None:
        raise SystemExit("--py-spy: py-spy is not on PATH (pip install py-spy)")
    out.mkdir(parents=True, exist_ok=True)
    spies = []
    for role, process in processes.items():
        name = role.replace(" ", "-").replace("(", "").replace(")", "")
        argv = [binary, "record", "--rate", "200", "--nonblocking", "--gil", "--format", "raw",
                "--output", str(out / f"{name}.txt"), "--pid", str(process.pid)]  # fmt: skip
        spies.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    time.sleep(1)  # attached before the first create
    return spies


if __name__ == "__main__":
    main()
