"""One key's reconcile, driven in this process: a key that changed while it ran runs again
at once, not pushed back onto the ready list, unless its run failed; a run reads its key's
own status write before the mirror has it; a run that fails outside its controller is
retried."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import DatabaseError, connection
from kubernetes import client

from controllers.base import Key
from controllers.graces import Graces, graces_from
from controllers.kube import ApiKube
from opsboard.engine import own_status
from opsboard.engine.enqueue import reconcile_enqueue
from opsboard.engine.models import ReconcileRun
from opsboard.engine.queue import Why, queue_for, ready_list
from opsboard.engine.runner import _controller_settings, reconcile_key
from opsboard.mirror.writer import mirror_apply
from tests.engine.toy import CONFIGMAP, TOY, toy
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _run_changed_midway(api: ApiKube, namespace: str, name: str, **spec: Any) -> list[str]:
    """Creates and mirrors a slow Toy, runs its key here, a person asking for a reconcile
    while it runs; returns the triggers of the runs recorded for it."""
    body = api.create(TOY, toy(name, namespace, sleep=0.5, touch=True, **spec))
    mirror_apply(kind=TOY, events=[("ADDED", body)])
    queue, key = queue_for("toy"), Key("toy", namespace, name)

    def change_during_the_run() -> None:
        wait_for(lambda: queue.client.exists(queue.lock_name(key)), what="the run")
        reconcile_enqueue(key=key, trigger="manual", detail="by a test")

    asker = threading.Thread(target=change_during_the_run)
    asker.start()
    assert reconcile_key(key=key, trigger="event", detail="ADDED Toy")
    asker.join()
    runs = ReconcileRun.objects.filter(namespace=namespace, name=name).order_by("started_at")
    return [run.trigger for run in runs]


def _keys_waiting() -> int:
    return int(queue_for("toy").client.llen(ready_list()))


def test_a_key_that_changed_while_it_ran_runs_again_at_once(
    in_process: None, api: ApiKube, namespace: str
) -> None:
    waiting = _keys_waiting()
    assert _run_changed_midway(api, namespace, "busy") == ["event", "manual"]
    assert _keys_waiting() == waiting  # served here: not pushed back


def test_a_failed_run_that_changed_meanwhile_goes_back_onto_the_ready_list(
    in_process: None, api: ApiKube, namespace: str
) -> None:
    waiting = _keys_waiting()
    assert _run_changed_midway(api, namespace, "failing", fail="temporary") == ["event"]
    assert _keys_waiting() == waiting + 1


@pytest.mark.parametrize("elsewhere", [False, True], ids=["same process", "another process"])
def test_a_run_reads_its_key_s_own_status_write_before_the_mirror_has_it(
    in_process: None, api: ApiKube, namespace: str, elsewhere: bool
) -> None:
    """No watcher runs here, so the mirror keeps the Toy as created: the second run would
    patch its status again with the stale resourceVersion it read (a 409) were the first
    run's own write not kept for it (own_status), or, in another process, not told with
    the key's lock (then it reads the Toy from the server)."""
    name = "settled"
    body = api.create(TOY, toy(name, namespace, touch=True))  # each run logged
    mirror_apply(kind=TOY, events=[("ADDED", body)])
    key = Key("toy", namespace, name)
    assert reconcile_key(key=key, trigger="event", detail="ADDED Toy")
    written = api.get(TOY, namespace, name)
    assert written is not None and written["status"]["observedGeneration"] == 1
    child = api.get(CONFIGMAP, namespace, name)
    assert child is not None
    mirror_apply(kind=CONFIGMAP, events=[("ADDED", child)])
    if elsewhere:
        own_status._written.clear()  # what another process knows of this one's writes

    assert reconcile_key(key=key, trigger="manual", detail="by a test")
    runs = ReconcileRun.objects.filter(namespace=namespace, name=name).order_by("started_at")
    assert [(run.trigger, run.outcome, run.error) for run in runs] == [
        ("event", "success", ""),
        ("manual", "success", ""),
    ]
    again = api.get(TOY, namespace, name)
    assert again is not None
    assert again["metadata"]["resourceVersion"] == written["metadata"]["resourceVersion"]


def test_a_create_refused_because_the_namespace_is_being_deleted_is_no_error(
    in_process: None, api: ApiKube, namespace: str, kube_api_client: Any
) -> None:
    """The API server refuses new content in a namespace being deleted (a 403): a CR whose
    child is deleted before it is does not retry, and is not marked Degraded."""
    body = toy("late", namespace)
    body["metadata"]["finalizers"] = ["opsboard.test/hold"]  # holds the namespace open
    created = api.create(TOY, body)
    mirror_apply(kind=TOY, events=[("ADDED", created)])  # as the mirror, one step behind
    core = client.CoreV1Api(kube_api_client)
    core.delete_namespace(namespace)
    wait_for(lambda: core.read_namespace(namespace).metadata.deletion_timestamp,
             what="the namespace terminating")  # fmt: skip
    try:
        assert reconcile_key(key=Key("toy", namespace, "late"), trigger="event", detail="x")
        [run] = ReconcileRun.objects.filter(namespace=namespace, name="late")
        assert (run.outcome, run.error) == ("success", "")
        assert api.get(CONFIGMAP, namespace, "late") is None
        conditions = (api.get(TOY, namespace, "late") or {}).get("status", {}).get("conditions")
        assert not [c for c in conditions or [] if c["type"] == "Degraded"]
    finally:
        api.patch(TOY, namespace, "late", {"metadata": {"finalizers": None}})


@contextmanager
def _run_log_refused() -> Iterator[None]:
    """The database refuses to store a run (a trigger, as a full disk or a revoked grant
    would): a failure in the run itself, not in its controller."""
    table = ReconcileRun._meta.db_table
    if connection.vendor == "postgresql":
        made = [
            "CREATE FUNCTION refuse_runs() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'no room for runs'; END $$",
            f"CREATE TRIGGER refuse_runs BEFORE INSERT ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION refuse_runs()",
        ]
        dropped = [f"DROP TRIGGER refuse_runs ON {table}", "DROP FUNCTION refuse_runs()"]
    else:
        made = [
            f"CREATE TRIGGER refuse_runs BEFORE INSERT ON {table} "
            "BEGIN SELECT RAISE(ABORT, 'no room for runs'); END"
        ]
        dropped = ["DROP TRIGGER refuse_runs"]
    with connection.cursor() as cursor:
        for statement in made:
            cursor.execute(statement)
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            for statement in dropped:
                cursor.execute(statement)


def test_a_run_that_fails_outside_its_controller_is_retried_with_backoff(
    in_process: None, api: ApiKube, namespace: str
) -> None:
    """Releasing the key's lock alone would drop the change that queued it."""
    body = api.create(TOY, toy("unrecorded", namespace))
    mirror_apply(kind=TOY, events=[("ADDED", body)])
    queue, key = queue_for("toy"), Key("toy", namespace, "unrecorded")
    with _run_log_refused(), pytest.raises(DatabaseError, match="no room for runs"):
        reconcile_key(key=key, trigger="event", detail="ADDED Toy")

    assert queue.client.zscore(queue.delayed, str(key)) is not None
    why = Why.load(queue.client.hget(queue.delayed_why, str(key)))
    assert why.trigger == "retry"
    assert why.detail.startswith("attempt 2: the run failed: ") and "no room" in why.detail
    assert not queue.client.exists(queue.lock_name(key))  # released, for the retry to take
    assert not ReconcileRun.objects.filter(namespace=namespace, name="unrecorded").exists()


def test_a_run_s_controllers_read_the_graces_the_settings_give(settings: Any) -> None:
    settings.OPSBOARD_UNSCHEDULABLE_GRACE_SECONDS = 120.0
    settings.OPSBOARD_UNREADY_GRACE_SECONDS = 45.0
    assert graces_from(_controller_settings()) == Graces(unschedulable=120.0, unready=45.0)
