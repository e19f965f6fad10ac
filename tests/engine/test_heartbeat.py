"""The watcher's heartbeat rows: the one that leads says so, and only it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from opsboard.engine.management.commands.runwatcher import Command
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
    Command._beat("new", started, leader=False)  # a standby's beats leave it alone
    assert leaders() == {"old"}

    Command._beat("new", started, leader=True, claim=True)
    assert leaders() == {"new"}

    with CaptureQueriesContext(connection) as queries:
        Command._beat("new", started, leader=True)
    assert [q["sql"].split()[0] for q in queries] == ["UPDATE"]
    row = WatcherHeartbeat.objects.get(identity="new")
    assert row.is_leader and row.heartbeat_at > started
