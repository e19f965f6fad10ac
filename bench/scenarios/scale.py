"""`python -m bench scale`: the inputs of docs/scaling.md, on SQLite and PostgreSQL.

A cold start of N Memcached CRs on 1 and on 2 worker processes (this machine's cores),
timed until every CR is spec-converged, gives reconciles per second per worker process
and per host. Around it: Redis commands per reconcile (redis INFO), database statements
per reconcile (PostgreSQL's pg_stat_statements: every process's statements, the
watcher's mirror writes included), and the mirror's rows and bytes per 1,000 objects.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

import psycopg
import redis

from bench.fleet import create_many
from bench.report import Outcome, Row
from bench.runner import NAMESPACE, Bench, start_operator
from bench.stack import Stack
from opsboard.embedded.postgres import EmbeddedPostgres, PostgresMissing

TIMEOUT = 300.0
MIRROR = "mirror_kubeobject"


def run(bench: Bench) -> Outcome:
    count = bench.size(full=300, quick=20)
    outcome = Outcome("scale", f"Scale inputs: cold start of {count:,} CRs")
    results: dict[str, dict[str, Any]] = {}
    for database in ("sqlite", "postgres"):
        for workers in (1, 2):
            label = f"{database}, {workers} worker process{'es' if workers > 1 else ''}"
            try:
                results[label] = _measure(bench, database, workers, count)
            except PostgresMissing as exc:
                outcome.notes.append(f"{database}: not measured: {exc}")
                break
    for label, f in results.items():
        outcome.rows.append(
            Row(f"{label}: reconciles per second", f["reconciles_per_second"], "1/s")
        )
        outcome.rows.append(
            Row(f"{label}: Redis commands per reconcile", f["redis_per_reconcile"], "n")
        )
        if f["statements_per_reconcile"] is not None:
            outcome.rows.append(
                Row(
                    f"{label}: database statements per reconcile",
                    f["statements_per_reconcile"],
                    "n",
                )
            )
        outcome.rows.append(
            Row(f"{label}: mirror rows per 1,000 CRs", f["mirror_rows_per_1000_crs"], "n")
        )
        outcome.rows.append(
            Row(f"{label}: mirror bytes per 1,000 objects", f["mirror_bytes_per_1000"], "B")
        )
    outcome.notes.append(
        f"{count:,} Memcached CRs of size 1; each owns a Deployment, a Service, a ReplicaSet, a "
        "Pod and Events, all mirrored; statements counted by pg_stat_statements over the cold "
        "start, all processes; mirror bytes: the table with its indexes (PostgreSQL) or its "
        "pages (SQLite dbstat)"
    )
    outcome.data = {"crs": count, "runs": results}
    return outcome


def _measure(bench: Bench, database: str, workers: int, count: int) -> dict[str, Any]:
    stack = bench.stack(f"scale-{database}-{workers}")
    server: EmbeddedPostgres | None = None
    try:
        if database == "postgres":
            server = EmbeddedPostgres(
                settings={"shared_preload_libraries": "pg_stat_statements"}
            ).start()
            with psycopg.connect(server.url(), autocommit=True) as conn:
                conn.execute("CREATE DATABASE opsboard")
            with psycopg.connect(server.url("opsboard"), autocommit=True) as conn:
                conn.execute("CREATE EXTENSION pg_stat_statements")
            stack.env["DATABASE_URL"] = server.url("opsboard")
        fleet = start_operator(stack, "opsboard", workers=workers, pods=count + 20)
        assert stack.redis is not None
        broker = redis.Redis.from_url(stack.redis.url)
        before = _counters(stack, server, broker)
        start = time.perf_counter()
        create_many(stack.api, NAMESPACE, [f"mc-{i:05d}" for i in range(count)], size=1)
        done = fleet.wait(lambda: len(fleet.spec_ok) >= count + 1, TIMEOUT)
        seconds = (done or time.perf_counter()) - start
        after = _counters(stack, server, broker)
        rows, size = _mirror(stack, server)
    finally:
        stack.stop()
        if server:
            server.stop()
    reconciles = after["reconciles"] - before["reconciles"]
    statements = after["statements"] - before["statements"] if server is not None else None
    return {
        "workers": workers,
        "converged": bool(done),
        "seconds": round(seconds, 2),
        "reconciles": reconciles,
        "reconciles_per_second": round(reconciles / seconds, 1),
        "redis_per_reconcile": round((after["redis"] - before["redis"]) / reconciles, 1),
        "statements_per_reconcile": round(statements / reconciles, 1) if statements else None,
        "mirror_rows": rows,
        "mirror_rows_per_1000_crs": round(rows / (count + 1) * 1000),
        "mirror_bytes_per_1000": round(size / rows * 1000) if rows else None,
    }


def _counters(stack: Stack, server: EmbeddedPostgres | None, broker: redis.Redis) -> dict[str, int]:
    # INFO counts the INFO itself: one command per reading, noise.
    found = {"redis": int(broker.info("stats")["total_commands_processed"])}
    query = "SELECT COUNT(*) + COALESCE(SUM(folded_count), 0) FROM engine_reconcilerun"
    if server is None:
        with sqlite3.connect(f"file:{stack.db}?mode=ro", uri=True, timeout=20) as conn:
            found["reconciles"] = int(conn.execute(query).fetchone()[0])
        found["statements"] = 0
        return found
    with psycopg.connect(server.url("opsboard"), autocommit=True) as conn:
        found["reconciles"] = int(conn.execute(query).fetchone()[0])  # type: ignore[index]
        calls = conn.execute(
            "SELECT COALESCE(SUM(calls), 0) FROM pg_stat_statements "
            "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ).fetchone()
        found["statements"] = int(calls[0])  # type: ignore[index]
    return found


def _mirror(stack: Stack, server: EmbeddedPostgres | None) -> tuple[int, int]:
    if server is None:
        with sqlite3.connect(f"file:{stack.db}?mode=ro", uri=True, timeout=20) as conn:
            rows = int(conn.execute(f"SELECT COUNT(*) FROM {MIRROR}").fetchone()[0])
            size = conn.execute(
                "SELECT SUM(pgsize) FROM dbstat WHERE name = ? OR name IN "
                "(SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?)",
                (MIRROR, MIRROR),
            ).fetchone()[0]
        return rows, int(size or 0)
    with psycopg.connect(server.url("opsboard"), autocommit=True) as conn:
        rows = conn.execute(f"SELECT COUNT(*) FROM {MIRROR}").fetchone()[0]  # type: ignore[index]
        size = conn.execute(f"SELECT pg_total_relation_size('{MIRROR}')").fetchone()[0]  # type: ignore[index]
    return int(rows), int(size)
