"""Connections to PostgreSQL stay bounded: Django's persistent connections, one per
process or thread that touches the database, reused from task to task (CONN_MAX_AGE),
never one per reconcile. docs/scaling.md turns this into max_connections."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from controllers.kube import ApiKube
from tests.engine.toy import CONFIGMAP, TOY, toy
from tests.fixtures.celery import EngineProcesses
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)
CONCURRENCY, WATCHERS, TOYS = 3, 2, 30


def backends() -> set[int]:
    """This database's other connections, by their client ports."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT client_port FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return {port for (port,) in cursor.fetchall()}


def test_connections_stay_bounded_by_the_processes_not_the_reconciles(
    engine: EngineProcesses, api: ApiKube, namespace: str, toy_crd: None
) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("counts PostgreSQL backends (SQLite has no connections to bound)")
    engine.controllers = "tests.engine.toy"
    worker = engine.start_worker(concurrency=CONCURRENCY, wait=False)
    for _ in range(WATCHERS):
        engine.start_watcher()
    engine.wait_worker_ready(worker)
    seen: list[int] = []
    ever: set[int] = set()
    done = threading.Event()

    def sample() -> None:
        try:
            while not done.is_set():
                now = backends()
                seen.append(len(now))
                ever.update(now)
                done.wait(0.1)
        finally:
            connection.close()

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        for i in range(TOYS):
            api.create(TOY, toy(f"t{i}", namespace, size=i, touch=True))
        for i in range(TOYS):
            wait_for(lambda n=f"t{i}": api.get(CONFIGMAP, namespace, n), timeout=60)
    finally:
        done.set()
        sampler.join()
    # One per pool process, per watcher its mirror writer and its heartbeat, and this
    # test's own; the sampler's is not counted (pg_backend_pid is the sampler's).
    bound = CONCURRENCY + 2 * WATCHERS + 1
    print(f"\nconnections: at most {max(seen)} at once, {len(ever)} ever; bound {bound}")
    assert 0 < max(seen) <= bound, seen
    # Reused from reconcile to reconcile, not opened for each (a few reopen as pool
    # processes start or the watch threads read their resume point).
    assert len(ever) <= bound + 2 * WATCHERS, sorted(ever)
