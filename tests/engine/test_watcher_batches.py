"""How the watcher gathers a batch: owned objects' changes, and a primary's that leaves its
generation observed, wait a moment for company; any other primary change is written at
once."""

from __future__ import annotations

import threading
import time
from typing import Any, cast

import pytest
from django.test import override_settings

from controllers.base import NODE, POD, Controller, Key
from controllers.kube import ApiKube
from opsboard.engine.watcher import Streamed, Watcher
from opsboard.mirror import writer
from opsboard.mirror.models import KindWatch, KubeObject
from opsboard.mirror.writer import kind_watch_resume_point
from tests.engine.toy import CONFIGMAP, TOY, expected_children, reconcile
from tests.mirror.factories import obj

READY = {"type": "Ready", "status": "True"}
TOYS = Controller("toy", TOY, (CONFIGMAP, POD), reconcile, expected_children)


@pytest.fixture
def watcher() -> Watcher:
    with override_settings(OPSBOARD_OWNED_LINGER_SECONDS=30.0):  # long: no race with the test
        return Watcher(kube=cast(ApiKube, None), controllers=[TOYS], enqueue=lambda **_: True)


def _later(watcher: Watcher, *items: Streamed) -> threading.Thread:
    def put() -> None:
        for item in items:
            time.sleep(0.1)
            watcher.inbox.put(item)

    thread = threading.Thread(target=put)
    thread.start()
    return thread


def test_owned_changes_wait_for_company_until_a_primary_change_comes(watcher: Watcher) -> None:
    pod_1, pod_2 = (Streamed(POD, "MODIFIED", obj(POD, n)) for n in ("p-1", "p-2"))
    cr = Streamed(TOY, "MODIFIED", obj(TOY, "a"))
    sender = _later(watcher, pod_2, cr)
    batch = watcher._drain(pod_1)
    sender.join()
    assert batch == [pod_1, pod_2, cr]


def test_a_primary_change_is_written_at_once(watcher: Watcher) -> None:
    cr = Streamed(TOY, "MODIFIED", obj(TOY, "a"))
    pod = Streamed(POD, "MODIFIED", obj(POD, "p-1"))
    sender = _later(watcher, pod)
    batch = watcher._drain(cr)
    sender.join()
    assert batch == [cr]
    assert watcher.inbox.get_nowait() == pod  # for the next batch


@pytest.mark.parametrize(
    "change",
    [
        Streamed(POD, "MODIFIED", obj(POD, "p-1", status={"conditions": [READY]})),
        Streamed(POD, "DELETED", obj(POD, "p-1")),
    ],
    ids=["ready", "deleted"],
)
def test_a_pod_turning_ready_or_gone_is_written_at_once(watcher: Watcher, change: Streamed) -> None:
    """What a CR's status tells waits only READY_GRACE; the pod's creation held before it
    goes along."""
    created = Streamed(POD, "ADDED", obj(POD, "p-1"))
    other = Streamed(POD, "ADDED", obj(POD, "p-2"))
    sender = _later(watcher, change, other)
    batch = watcher._drain(created)
    sender.join()
    assert batch == [created, change]
    assert watcher.inbox.get_nowait() == other


def _toy(type_: str, *, observed: int | None, deleting: bool = False) -> Streamed:
    body = obj(TOY, "a", generation=2, status={"observedGeneration": observed})
    if deleting:
        body["metadata"]["deletionTimestamp"] = "2026-11-26T20:00:00Z"
    return Streamed(TOY, type_, body)


def test_a_primary_change_that_leaves_its_generation_observed_waits_for_company(
    watcher: Watcher,
) -> None:
    """The operator's own status write wakes nobody: it waits like an owned change."""
    written = _toy("MODIFIED", observed=2)
    pod = Streamed(POD, "MODIFIED", obj(POD, "p-1"))
    edit = _toy("MODIFIED", observed=1)
    sender = _later(watcher, pod, edit)
    batch = watcher._drain(written)
    sender.join()
    assert batch == [written, pod, edit]  # until the spec edit, written at once


@pytest.mark.parametrize(
    "change",
    [
        _toy("MODIFIED", observed=1),
        _toy("MODIFIED", observed=None),
        _toy("MODIFIED", observed=2, deleting=True),
        _toy("ADDED", observed=2),
    ],
    ids=["new generation", "never observed", "deleting", "added"],
)
def test_a_primary_change_that_asks_for_work_is_written_at_once(
    watcher: Watcher, change: Streamed
) -> None:
    pod = Streamed(POD, "MODIFIED", obj(POD, "p-1"))
    sender = _later(watcher, pod)
    batch = watcher._drain(change)
    sender.join()
    assert batch == [change]


def test_the_wait_is_a_setting() -> None:
    with override_settings(OPSBOARD_OWNED_LINGER_SECONDS=0.0):  # status as fresh as can be
        watcher = Watcher(kube=cast(ApiKube, None), controllers=[TOYS], enqueue=lambda **_: True)
    pod_1, pod_2 = (Streamed(POD, "MODIFIED", obj(POD, n)) for n in ("p-1", "p-2"))
    sender = _later(watcher, pod_2)
    batch = watcher._drain(pod_1)
    sender.join()
    assert batch == [pod_1]
    assert watcher.inbox.get_nowait() == pod_2


def test_a_stream_waits_while_the_writer_is_far_behind(
    watcher: Watcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The inbox is bounded: a stream's next item waits for the writer to take one."""
    monkeypatch.setattr("opsboard.engine.watcher.INBOX_MAX", 2)
    first, second, third = (Streamed(POD, "MODIFIED", obj(POD, f"p-{n}")) for n in (1, 2, 3))
    watcher._put(first)
    watcher._put(second)
    stream = threading.Thread(target=watcher._put, args=(third,), daemon=True)
    stream.start()
    stream.join(timeout=0.3)
    assert stream.is_alive()  # held back
    assert watcher.inbox.get_nowait() == first
    stream.join(timeout=10)
    assert not stream.is_alive()
    assert [watcher.inbox.get_nowait(), watcher.inbox.get_nowait()] == [second, third]


@pytest.mark.django_db
def test_resume_points_are_saved_at_most_every_so_often_and_when_the_inbox_is_quiet(
    watcher: Watcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("opsboard.engine.watcher.SAVE_EVERY", 3600.0)
    watcher._versions[TOY] = ("5", False, True)
    watcher._save_versions()  # the first
    assert kind_watch_resume_point(kind=TOY) == "5"
    watcher._versions[TOY] = ("6", False, True)
    watcher._save_versions()  # too soon after it
    assert kind_watch_resume_point(kind=TOY) == "5"
    watcher._save_versions(quiet=True)
    assert kind_watch_resume_point(kind=TOY) == "6"


@pytest.mark.django_db
def test_resume_points_only_bookmarks_and_heartbeats_moved_are_saved_seldom(
    watcher: Watcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing to replay behind them: an idle watcher does not write each one, quiet or
    not, until QUIET_SAVE_EVERY has passed or it stops gracefully."""
    monkeypatch.setattr("opsboard.engine.watcher.QUIET_SAVE_EVERY", 3600.0)
    watcher._versions[TOY] = ("5", False, True)
    watcher._save_versions(quiet=True)
    watcher._versions[TOY] = ("6", False, False)  # a bookmark
    watcher._save_versions(quiet=True)
    assert kind_watch_resume_point(kind=TOY) == "5"
    monkeypatch.setattr("opsboard.engine.watcher.QUIET_SAVE_EVERY", 0.0)
    watcher._save_versions()
    assert kind_watch_resume_point(kind=TOY) == "6"
    monkeypatch.setattr("opsboard.engine.watcher.QUIET_SAVE_EVERY", 3600.0)
    watcher._versions[TOY] = ("7", False, False)
    watcher._save_versions(quiet=True, final=True)
    assert kind_watch_resume_point(kind=TOY) == "7"


@pytest.mark.django_db
@pytest.mark.parametrize("observed", [False, True])
def test_a_users_change_is_queued_before_its_batchs_owned_changes_are_written(
    observed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change of a CR that asks for work (here its new generation) is mirrored and queued
    first; the operator's own status write may wait for the owned changes beside it, and
    the batch is then one mirror write."""
    queued: list[tuple[str, bool]] = []
    writes: list[int] = []  # the rows of each mirror write
    write = writer._write

    def counted(final: dict[str, Any], *rest: Any) -> None:
        writes.append(len(final))
        write(final, *rest)

    monkeypatch.setattr(writer, "_write", counted)

    def enqueue(*, key: Key, trigger: str, detail: str) -> None:
        queued.append((key.name, KubeObject.objects.filter(name="p-1").exists()))

    watcher = Watcher(kube=cast(ApiKube, None), controllers=[TOYS], enqueue=enqueue)
    watcher._listed_by = None  # every kind counts as listed
    toy = obj(TOY, "a", generation=2, status={"observedGeneration": 2 if observed else 1})
    pod = obj(POD, "p-1", owner=obj(TOY, "b"))
    watcher._apply([Streamed(POD, "MODIFIED", pod), Streamed(TOY, "MODIFIED", toy)])
    assert KubeObject.objects.filter(name__in=["a", "p-1"]).count() == 2
    if observed:
        assert writes == [2]
    else:
        assert queued[0] == ("a", False)
        assert writes == [1, 1]


@pytest.mark.django_db
def test_a_nodes_heartbeat_alone_is_not_mirrored_and_moves_no_last_change(
    watcher: Watcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kubelet's "still here" (its conditions' lastHeartbeatTime, a new resourceVersion)
    is no change: no write, and the pages' "last change" stays. A change of condition is
    written, with the heartbeat it carries (the Diagnosis's "last heard from")."""
    monkeypatch.setattr("opsboard.engine.watcher.SAVE_EVERY", 0.0)

    def node(ready: str, heartbeat: str) -> dict[str, Any]:
        status = {"conditions": [{"type": "Ready", "status": ready,
                                  "lastHeartbeatTime": heartbeat,
                                  "lastTransitionTime": "2026-12-02T07:00:00Z"}]}  # fmt: skip
        return obj(NODE, "n1", namespace="", uid="n1", status=status)

    def apply(body: dict[str, Any], type_: str = "MODIFIED") -> tuple[str, Any]:
        watcher._apply([Streamed(NODE, type_, body)])
        row = KubeObject.objects.get(kind="Node", name="n1")
        return row.resource_version, KindWatch.objects.get(kind="Node").last_event_at

    first = node("True", "2026-12-02T07:00:00Z")
    mirrored, changed_at = apply(first, "ADDED")
    assert mirrored == first["metadata"]["resourceVersion"]
    assert apply(node("True", "2026-12-02T07:05:00Z")) == (mirrored, changed_at)
    lost = node("Unknown", "2026-12-02T07:05:00Z")
    assert apply(lost)[0] == lost["metadata"]["resourceVersion"]
    ready = KubeObject.objects.get(kind="Node", name="n1").body["status"]["conditions"][0]
    assert (ready["status"], ready["lastHeartbeatTime"]) == ("Unknown", "2026-12-02T07:05:00Z")
