"""The watcher's heartbeat rows: the one that leads says so, and only it; the rows of
watchers long gone are removed; a standby says why it cannot take the Lease."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from opsboard.engine.heartbeat import PRUNE_AFTER, Heartbeat
from opsboard.mirror.models import WatcherHeartbeat

pytestmark = pytest.mark.django_db


def leaders() -> set[str]:
    return set(WatcherHeartbeat.objects.filter(is_leader=True).values_list("identity", flat=True))


def test_taking_the_lease_clears_a_predecessors_claim_and_a_renewal_is_one_update() -> None:
    started = timezone.now()
    # A predecessor killed while it led: its row still says so.
    WatcherHeartbeat.objects.create(
        identity="old", started_at=started, heartbeat_at=started, is_leader=True
    )
    new = Heartbeat("new", started)
    new.beat(leader=False)  # a standby's beats leave it alone
    assert leaders() == {"old"}

    new.beat(leader=True, claim=True)
    assert leaders() == {"new"}

    with CaptureQueriesContext(connection) as queries:
        new.beat(leader=True)
    assert [q["sql"].split()[0] for q in queries] == ["UPDATE"]
    row = WatcherHeartbeat.objects.get(identity="new")
    assert row.is_leader and row.heartbeat_at > started


def test_the_leader_removes_the_rows_of_watchers_gone_for_good_and_keeps_the_live() -> None:
    now = timezone.now()
    long_ago = now - timedelta(seconds=PRUNE_AFTER + 60)
    for identity, at in (("killed", long_ago), ("standby", now - timedelta(seconds=5))):
        WatcherHeartbeat.objects.create(identity=identity, started_at=at, heartbeat_at=at)
    leader = Heartbeat("leader", now)
    leader.beat(leader=False)  # a standby prunes nothing
    assert WatcherHeartbeat.objects.filter(identity="killed").exists()

    leader.beat(leader=True, claim=True)
    rows = set(WatcherHeartbeat.objects.values_list("identity", flat=True))
    assert rows == {"leader", "standby"}


def test_a_standby_records_why_it_cannot_take_the_lease_and_forgets_it_once_it_can() -> None:
    standby = Heartbeat("w2", timezone.now())
    standby.beat(leader=False, lease_error="GET …/leases/opsboard-watcher: Connection refused")
    row = WatcherHeartbeat.objects.get(identity="w2")
    assert row.lease_error.endswith("Connection refused")
    standby.beat(leader=True, claim=True)
    assert WatcherHeartbeat.objects.get(identity="w2").lease_error == ""


def test_a_graceful_stop_removes_the_row() -> None:
    beat = Heartbeat("w3", timezone.now())
    beat.beat(leader=True, claim=True)
    beat.remove()
    assert not WatcherHeartbeat.objects.filter(identity="w3").exists()
