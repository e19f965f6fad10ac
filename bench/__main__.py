"""`python -m bench [--quick] [--no-peer] [--kubeconfig FILE] [scenario ...]`: run, print the
table, write files; exit 1 if a scenario could not run. With --kubeconfig, every scenario
that does not need kubesim's hooks runs against that cluster (in namespaces of its own,
deleted afterwards) instead."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

from bench.report import Outcome, table, write_json, write_plots
from bench.runner import Bench
from bench.scenarios import KUBESIM_ONLY, ON_REQUEST, SCENARIOS

RESULTS = Path(__file__).resolve().parent / "results"


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("scenarios", nargs="*", metavar="scenario",
                        help=f"any of {', '.join(SCENARIOS)} (default: all)")  # fmt: skip
    parser.add_argument(
        "--quick", action="store_true", help="small sizes: a first look, a smoke test"
    )
    parser.add_argument("--no-peer", action="store_true", help="skip the kopf peer")
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        help="run on this cluster instead of kubesim (the scenarios that need no kubesim hook: "
        f"all but {', '.join(sorted(KUBESIM_ONLY))})",
    )
    parser.add_argument("--crs", type=int, metavar="N",
                        help="CRs of the cold start, and of the UI scenario's reconciled "
                        "fleet (default 1,000, --quick 20): for a slow cluster, or one with "
                        "no room for 1,000 pods; targets on them are judged at 1,000 only")  # fmt: skip
    parser.add_argument("--out", type=Path, help=f"where JSON and PNGs go (default {RESULTS}, "
                        f"with --kubeconfig {RESULTS / 'real-cluster'})")  # fmt: skip
    parser.add_argument("--pool", choices=("prefork", "threads"), default="prefork",
                        help="the Celery pool of opsboard's workers (default prefork, as make "
                        "run; threads: to compare)")  # fmt: skip
    parser.add_argument("--keep", action="store_true", help="keep the work dir (stack logs)")
    parser.add_argument("--trace", action="store_true",
                        help="patch: mark each change's way through opsboard's processes and "
                        "print where its time went (bench/trace.py); the marks go to "
                        "OUT/patch-trace.txt")  # fmt: skip
    args = parser.parse_args(argv)
    unknown = [s for s in args.scenarios if s not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenario {', '.join(unknown)}; choose from {', '.join(SCENARIOS)}")
    if args.kubeconfig is not None:
        if not args.kubeconfig.is_file():
            parser.error(f"--kubeconfig {args.kubeconfig}: no such file")
        args.kubeconfig = args.kubeconfig.resolve()
        if only := [s for s in args.scenarios if s in KUBESIM_ONLY]:
            parser.error(
                f"{', '.join(only)} need kubesim's hooks and cannot run with --kubeconfig; "
                f"choose from {', '.join(s for s in SCENARIOS if s not in KUBESIM_ONLY)}"
            )
        args.scenarios = args.scenarios or [s for s in SCENARIOS if s not in KUBESIM_ONLY]
    if args.crs is not None and args.crs < 1:
        parser.error(f"--crs {args.crs}: give at least 1")
    if args.out is None:
        args.out = RESULTS / "real-cluster" if args.kubeconfig else RESULTS
    return args


def main(argv: list[str]) -> int:
    args = parse(argv)
    # `timeout` and CI send SIGTERM: unwind like Ctrl-C so every stack stops its servers.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    workdir = Path(tempfile.mkdtemp(prefix="opsboard-bench-"))
    bench = Bench(
        quick=args.quick,
        workdir=workdir,
        peer=not args.no_peer,
        kubeconfig=args.kubeconfig,
        crs=args.crs,
        pool=args.pool,
        trace=args.out if args.trace else None,
    )
    outcomes: list[Outcome] = []
    try:
        for name in args.scenarios or [s for s in SCENARIOS if s not in ON_REQUEST]:
            outcomes.append(run_one(name, bench))
            # After each scenario: a long run cut short keeps what it measured.
            write_json(outcomes, args.out, quick=args.quick)
    finally:
        bench.release()
        if args.keep:
            log(f"work dir kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    printed = table(outcomes, quick=args.quick)
    print(printed)
    write_json(outcomes, args.out, quick=args.quick)
    plots = write_plots(outcomes, args.out)
    log(f"wrote {args.out / 'results.json'} and {len(plots)} plots")
    # A run that measured less than it was asked to must not look like a good one to a
    # script or CI: the table says why, the exit status that it happened.
    if failed := [outcome.name for outcome in outcomes if outcome.error is not None]:
        log(f"not measured: {', '.join(failed)} (the table and the log above say why)")
        return 1
    return 0


def run_one(name: str, bench: Bench) -> Outcome:
    log(f"running {name}{' (quick)' if bench.quick else ''}")
    load_before = os.getloadavg()[0]
    wall_start = time.time()
    start = time.perf_counter()
    try:
        outcome = SCENARIOS[name](bench)
    except Exception as exc:  # a missing or broken piece: report it, run the others
        outcome = Outcome(name, name, error=str(exc).splitlines()[0] if str(exc) else repr(exc))
        outcome.data["traceback"] = traceback.format_exc()
        # What the stacks' processes said meanwhile: a failure must explain itself.
        outcome.data["logs"] = log_tails(bench.workdir, since=wall_start)
        tails = "".join(f"\n--- {path}\n{tail}" for path, tail in outcome.data["logs"].items())
        log(f"{name} could not run:\n{traceback.format_exc()}{tails}")
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (a time limit): say what it was doing
        recent = log_tails(bench.workdir, since=wall_start)
        log(f"{name} interrupted;" + "".join(f"\n--- {p}\n{t}" for p, t in recent.items()))
        raise
    outcome.seconds = time.perf_counter() - start
    # Other work on the machine skews every figure: say how busy it was.
    outcome.data["load_average"] = {"before": load_before, "after": os.getloadavg()[0]}
    if max(load_before, os.getloadavg()[0]) > (os.cpu_count() or 1):
        outcome.notes.append(
            f"the machine was busy with other work: 1-min load average {load_before:.1f} before, "
            f"{os.getloadavg()[0]:.1f} after, on {os.cpu_count()} CPUs"
        )
    outcome.data["pool"] = bench.pool
    if bench.pool != "prefork":
        outcome.notes.append(f"opsboard's Celery workers ran the {bench.pool} pool (--pool)")
    log(f"{name} took {outcome.seconds:.0f} s")
    return outcome


def log_tails(workdir: Path, *, since: float, chars: int = 2000) -> dict[str, str]:
    """The end of every process log under the work dir written to since `since` (the
    failed scenario's stacks, and a fleet it was handed), by path under the work dir."""
    tails = {}
    for path in sorted(workdir.rglob("*.log")):
        try:
            if path.stat().st_mtime < since:
                continue
            with path.open("rb") as file:
                file.seek(max(0, path.stat().st_size - chars))
                tail = file.read().decode(errors="replace")
            if tail.strip():
                tails[str(path.relative_to(workdir))] = tail
        except OSError:
            continue
    return tails


def log(message: str) -> None:
    print(f"bench | {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
