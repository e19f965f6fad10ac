"""Several writers on the mirror at once, as during a watcher failover: an old leader still
flushing while the new one re-lists. On PostgreSQL this is row locks and deadlocks; on
SQLite, one writer at a time. Either way nothing is lost, duplicated or surfaced."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import pytest
from django.db import connection, transaction
from django.db.models import F

from opsboard.db_retry import retrying
from opsboard.mirror.models import KubeObject
from opsboard.mirror.writer import mirror_apply, mirror_relist
from tests.mirror.factories import MEMCACHED, obj

pytestmark = pytest.mark.django_db(transaction=True)


def in_threads(*work: Callable[[], object]) -> None:
    """Runs each callable in its own thread (its own connection); re-raises the first error."""
    errors: list[BaseException] = []

    def run(fn: Callable[[], object]) -> None:
        try:
            fn()
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(fn,)) for fn in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a writer hung"
    if errors:
        raise errors[0]


def versioned(body: dict, version: int) -> dict:  # type: ignore[type-arg]
    return {**body, "metadata": {**body["metadata"], "resourceVersion": str(version)}}


def test_two_writers_upserting_the_same_objects_in_opposite_orders_lose_and_repeat_nothing() -> (
    None
):
    objects = [obj(MEMCACHED, f"m{i:03}") for i in range(200)]
    for round_ in range(1, 11):
        # The two disagree: one writes older versions of every object than the other.
        bodies = [versioned(o, 10_000 * round_ + 1000 + i) for i, o in enumerate(objects)]
        older = [versioned(o, 10_000 * round_ + i) for i, o in enumerate(objects)]
        forward = [("MODIFIED", b) for b in older]
        backward = [("MODIFIED", b) for b in bodies][::-1]
        start = threading.Barrier(2)

        def write(events: list[tuple[str, dict]], start: threading.Barrier = start) -> None:  # type: ignore[type-arg]
            start.wait(timeout=30)
            mirror_apply(kind=MEMCACHED, events=events)

        in_threads(lambda f=forward: write(f), lambda b=backward: write(b))
        rows = list(KubeObject.objects.values_list("name", "uid", "resource_version"))
        assert len(rows) == len(objects)
        assert len({name for name, _, _ in rows}) == len(objects)
        expected = {b["metadata"]["uid"]: b["metadata"]["resourceVersion"] for b in bodies}
        assert {uid: version for _, uid, version in rows} == expected


def test_a_relist_racing_a_late_flush_of_the_old_leader_ends_equal_to_the_list() -> None:
    objects = [obj(MEMCACHED, f"m{i:03}") for i in range(150)]
    mirror_apply(kind=MEMCACHED, events=[("ADDED", o) for o in objects])
    # Meanwhile in the cluster: a third changed, a third deleted, 50 new.
    listed = [versioned(o, 50_000 + i) if i % 3 == 0 else o for i, o in enumerate(objects)]
    listed = [o for i, o in enumerate(listed) if i % 3 != 1]
    listed += [obj(MEMCACHED, f"n{i:03}") for i in range(50)]
    # The old leader's last batch: the same changes as events, older than the list.
    late = [("MODIFIED", versioned(o, 40_000 + i)) for i, o in enumerate(objects) if i % 3 == 0]
    late += [("DELETED", o) for i, o in enumerate(objects) if i % 3 == 1]
    in_threads(
        lambda: mirror_relist(kind=MEMCACHED, items=listed),
        lambda: mirror_apply(kind=MEMCACHED, events=late),
    )
    # The new leader's watch then resumes from its list: replays change nothing.
    mirror_relist(kind=MEMCACHED, items=listed)
    rows = dict(KubeObject.objects.values_list("uid", "resource_version"))
    assert rows == {o["metadata"]["uid"]: o["metadata"]["resourceVersion"] for o in listed}


def test_a_deadlock_is_retried_and_never_surfaces(caplog: pytest.LogCaptureFixture) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite runs one writer at a time: it has no deadlock to retry")
    a, b = obj(MEMCACHED, "a"), obj(MEMCACHED, "b")
    mirror_apply(kind=MEMCACHED, events=[("ADDED", a), ("ADDED", b)])
    both_hold_one = threading.Barrier(2)

    def cross(first: dict, second: dict) -> None:  # type: ignore[type-arg]
        attempts = 0

        def work() -> None:
            nonlocal attempts
            attempts += 1
            with transaction.atomic():
                bump = {"generation": F("generation") + 1}
                KubeObject.objects.filter(uid=first["metadata"]["uid"]).update(**bump)
                if attempts == 1:  # each holds one row and wants the other's: a deadlock
                    both_hold_one.wait(timeout=30)
                KubeObject.objects.filter(uid=second["metadata"]["uid"]).update(**bump)

        retrying(work, what="the crossing update")

    with caplog.at_level(logging.INFO, logger="opsboard.db_retry"):
        in_threads(lambda: cross(a, b), lambda: cross(b, a))
    assert "deadlock detected" in caplog.text
    assert set(KubeObject.objects.values_list("generation", flat=True)) == {3}
