"""A PostgreSQL restart drops every client's connection: the watcher's threads must connect
again (its heartbeat and its mirror writer), go on leading, and stop cleanly. Run on
PostgreSQL (make test's second pass: OPSBOARD_TEST_DATABASE=postgres)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from controllers.kube import ApiKube
from opsboard.mirror.models import KubeObject, WatcherHeartbeat
from tests.engine.toy import TOY, child_size, toy
from tests.fixtures.celery import EngineProcesses
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def drop_other_connections() -> int:
    """What a restart does to the clients: every backend of the test database but the test's
    own is terminated. Returns how many."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE pid <> pg_backend_pid() AND datname = current_database()"
        )
        return int(cursor.fetchone()[0])


def test_the_watcher_connects_again_after_the_database_drops_its_connections(
    engine: EngineProcesses, toy_crd: None, api: ApiKube, namespace: str
) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("terminates PostgreSQL backends: run with OPSBOARD_TEST_DATABASE=postgres")
    engine.controllers = "tests.engine.toy"
    engine.start_worker()
    watcher = engine.start_watcher()
    api.create(TOY, toy("a", namespace, size=1))
    wait_for(lambda: child_size(api, namespace, "a") == "1", what="the first reconcile")
    leader = wait_for(
        lambda: WatcherHeartbeat.objects.filter(is_leader=True).first(), what="the leader"
    )

    dropped_at = timezone.now()
    assert drop_other_connections() >= 1, "the watcher's connections at least"
    wait_for(
        lambda: WatcherHeartbeat.objects.filter(
            identity=leader.identity, is_leader=True, heartbeat_at__gt=dropped_at
        ).exists(),
        what="a heartbeat after the drop",
    )
    api.patch(TOY, namespace, "a", {"spec": {"size": 2}})
    mirrored = KubeObject.objects.filter(kind=TOY.kind, namespace=namespace, name="a")
    wait_for(lambda: mirrored.get().spec.get("size") == 2, what="the change mirrored")
    wait_for(lambda: child_size(api, namespace, "a") == "2", what="the change reconciled")
    assert watcher.poll() is None, engine.logs()
    leaders = WatcherHeartbeat.objects.filter(is_leader=True).values_list("identity", flat=True)
    assert list(leaders) == [leader.identity]

    # Dropped once more, then a graceful stop: it still removes its row, with no traceback.
    drop_other_connections()
    engine.kill(watcher, signal.SIGTERM)
    log = _log_of(engine.tmp, "watcher")
    assert watcher.returncode == 0, log
    assert "stopped and released the lease" in log
    assert not WatcherHeartbeat.objects.filter(identity=leader.identity).exists()


def _log_of(tmp: Path, name: str) -> str:
    [path] = tmp.glob(f"*-{name}.log")
    return path.read_text()
