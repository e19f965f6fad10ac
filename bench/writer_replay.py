"""The watcher's writer offline: the CPU of applying a cold start's batches, replayed.
Prints figures; never asserts.

    python -m bench.writer_replay record FILE [--crs N] [--kubeconfig F]
    python -m bench.writer_replay replay FILE [--postgres] [--runs N] [--profile]

`record` runs `bench.cpu_profile`'s cold start (N Memcached CRs, default 300, on kubesim
or the cluster of F) with every batch the watcher's mirror writer takes appended to FILE.
`replay` feeds those batches, in order, to `Watcher._apply` in a fresh process, with a
fresh mirror (a SQLite file, or a database on a throwaway PostgreSQL server) and a real
redis-server: the writer's whole path (the mirror reads and writes, the mapping to keys,
the queueing) without the cluster, the streams or the machine's other load, so two heads
of the code compare within a few percent where a live cold start spreads by ten. Each run
prints the process CPU it took, per batch and per CR of the recording.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.stack import PYTHON, ROOT

HOOK = Path(__file__).parent / "replay_hook"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.writer_replay", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    record = sub.add_parser("record")
    record.add_argument("file", type=Path)
    record.add_argument("--crs", type=int, default=300)
    record.add_argument("--kubeconfig", type=Path)
    replay = sub.add_parser("replay")
    replay.add_argument("file", type=Path)
    replay.add_argument("--postgres", action="store_true")
    replay.add_argument("--runs", type=int, default=3)
    replay.add_argument("--profile", action="store_true", help="cProfile one run instead")
    sub.add_parser("_one").add_argument("file", type=Path)  # a replay's own process
    args = parser.parse_args()
    if args.command == "record":
        _record(args.file.resolve(), args.crs, args.kubeconfig)
    elif args.command == "replay":
        _replay(args.file.resolve(), args.postgres, 1 if args.profile else args.runs, args.profile)
    else:
        _one(args.file)


def _record(file: Path, crs: int, kubeconfig: Path | None) -> None:
    file.unlink(missing_ok=True)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(HOOK), os.environ.get("PYTHONPATH")])),
        "OPSBOARD_RECORD_BATCHES": str(file),
    }
    command = [PYTHON, "-m", "bench.cpu_profile", "--crs", str(crs)]
    if kubeconfig:
        command += ["--kubeconfig", str(kubeconfig.resolve())]
    subprocess.run(command, cwd=ROOT, env=env, check=True)
    print(f"recorded the watcher's batches in {file} ({file.stat().st_size:,} bytes)")


def _replay(file: Path, postgres: bool, runs: int, profile: bool) -> None:
    import psycopg

    from opsboard.embedded.postgres import EmbeddedPostgres
    from opsboard.embedded.redis import EmbeddedRedis

    with tempfile.TemporaryDirectory(prefix="opsboard-replay-") as tmp:
        redis = EmbeddedRedis(Path(tmp) / "redis").start()
        server = EmbeddedPostgres().start() if postgres else None
        try:
            for run in range(runs):
                if server is not None:
                    with psycopg.connect(server.url(), autocommit=True) as conn:
                        conn.execute(f"CREATE DATABASE replay{run}")
                    url = server.url(f"replay{run}")
                else:
                    url = f"sqlite:///{tmp}/mirror-{run}.sqlite3"
                env = {
                    **os.environ,
                    "DATABASE_URL": url,
                    "OPSBOARD_SECRET_KEY": "bench-only-not-secret",
                    "REDIS_URL": redis.url,
                    "OPSBOARD_STATE_DIR": tmp,
                    "DJANGO_SETTINGS_MODULE": "opsboard.settings",
                    **({"OPSBOARD_REPLAY_PROFILE": "1"} if profile else {}),
                }
                command = [PYTHON, "-m", "bench.writer_replay", "_one", str(file)]
                subprocess.run(command, cwd=ROOT, env=env, check=True)
        finally:
            if server is not None:
                server.stop()
            redis.stop()


def _one(file: Path) -> None:
    import django

    django.setup()
    from django.core.management import call_command

    from opsboard.engine.echoes import echoes_of
    from opsboard.engine.enqueue import reconcile_enqueue, reconcile_enqueue_many
    from opsboard.engine.registered import controllers
    from opsboard.engine.watcher import Watcher

    call_command("migrate", verbosity=0)
    batches = _load(file)
    watcher = Watcher(
        kube=None,  # type: ignore[arg-type]  # the writer never asks the cluster
        controllers=list(controllers().values()),
        enqueue=reconcile_enqueue,
        enqueue_many=reconcile_enqueue_many,
        echoes=echoes_of,
    )
    watcher._listed_by = None  # every kind counts as listed: keys are queued at once
    profiler = None
    if os.environ.get("OPSBOARD_REPLAY_PROFILE"):
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    cpu = time.process_time()
    for batch in batches:
        watcher._apply(batch)
    cpu = time.process_time() - cpu
    if profiler is not None:
        import pstats

        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    crs = sum(
        1 for batch in batches for item in batch
        if getattr(item, "type", "") == "ADDED" and item.kind.kind == "Memcached"
    )  # fmt: skip
    print(
        f"{len(batches)} batches, {sum(map(len, batches))} items: {cpu * 1000:.0f} ms CPU,"
        f" {cpu * 1000 / len(batches):.2f} ms per batch, {cpu * 1000 / max(crs, 1):.2f} ms per CR"
    )


def _load(file: Path) -> list[list[Any]]:
    batches = []
    with file.open("rb") as data:
        while True:
            try:
                batches.append(pickle.load(data))
            except EOFError:
                return batches


if __name__ == "__main__":
    main()
