"""The in-process store API that the simulated cluster and the HTTP layer share."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubesim import store as store_module
from kubesim.errors import ApiError, FieldError, invalid
from kubesim.gc import GarbageCollector
from kubesim.store import Store


@pytest.fixture
def store() -> Iterator[Store]:
    """A store whose namespace controllers have settled (each namespace has its CA map)."""
    s = Store(None)
    gc = GarbageCollector(s)  # subscribes, as the server starts it
    deadline = time.monotonic() + 5
    while len(s.list("configmaps", field_selector="metadata.name=kube-root-ca.crt")) < 4:
        assert time.monotonic() < deadline, "the namespaces were never populated"
        time.sleep(0.01)
    yield s
    gc.stop()
    s.close()


def _cm(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}


def test_initial_namespaces_exist_and_are_populated(store: Store) -> None:
    names = [n["metadata"]["name"] for n in store.list("namespaces")]
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]
    labels = store.get("namespaces", None, "default")["metadata"]["labels"]
    assert labels == {"kubernetes.io/metadata.name": "default"}
    assert store.get("serviceaccounts", "kube-system", "default")["metadata"]["uid"]


def test_returned_objects_are_private_copies(store: Store) -> None:
    created = store.create("configmaps", _cm("a"), namespace="default")
    created["data"]["k"] = "changed"
    assert store.get("configmaps", "default", "a")["data"] == {"k": "v"}


def test_one_resource_version_counter_across_kinds(store: Store) -> None:
    a = store.create("configmaps", _cm("a"), namespace="default")
    b = store.create("secrets", {"metadata": {"name": "b"}}, namespace="default")
    assert int(b["metadata"]["resourceVersion"]) == int(a["metadata"]["resourceVersion"]) + 1


def test_subscribers_see_commits_in_order(store: Store) -> None:
    seen: list[tuple[str, str, str]] = []
    done = threading.Event()

    def on_event(kind: str, resource: str, obj: dict[str, Any]) -> None:
        seen.append((kind, resource, obj["metadata"]["name"]))
        if kind == "DELETED":
            done.set()

    unsubscribe = store.subscribe(on_event)
    store.create("configmaps", _cm("s"), namespace="default")
    store.patch("configmaps", "default", "s", {"data": {"k": "w"}})
    store.delete("configmaps", "default", "s")
    assert done.wait(5)
    unsubscribe()
    assert seen == [
        ("ADDED", "configmaps", "s"),
        ("MODIFIED", "configmaps", "s"),
        ("DELETED", "configmaps", "s"),
    ]


def test_a_subscriber_sees_no_commit_made_before_it_subscribed(store: Store) -> None:
    # A slow subscriber holds the dispatcher, so the first commit is still queued when the
    # second subscriber arrives.
    release, first_seen = threading.Event(), threading.Event()
    late: list[str] = []

    def slow(kind: str, resource: str, obj: dict[str, Any]) -> None:
        first_seen.set()
        release.wait(5)

    def record(kind: str, resource: str, obj: dict[str, Any]) -> None:
        late.append(obj["metadata"]["name"])

    stop_slow = store.subscribe(slow, ["configmaps"])
    store.create("configmaps", _cm("held"), namespace="default")
    assert first_seen.wait(5)
    store.create("configmaps", _cm("before"), namespace="default")
    stop_record = store.subscribe(record, ["configmaps"])
    store.create("configmaps", _cm("after"), namespace="default")
    release.set()
    deadline = time.monotonic() + 5
    while not late and time.monotonic() < deadline:
        time.sleep(0.01)
    stop_slow()
    stop_record()
    assert late == ["after"]


def test_update_with_stale_resource_version_is_409(store: Store) -> None:
    first = store.create("configmaps", _cm("u"), namespace="default")
    store.patch("configmaps", "default", "u", {"data": {"k": "2"}})
    with pytest.raises(ApiError) as exc:
        store.update("configmaps", first)
    assert exc.value.code == 409 and exc.value.reason == "Conflict"


def test_events_older_than_the_window_are_gone() -> None:
    small = Store(None, window=8)
    try:
        start = small.resource_version
        for i in range(20):
            small.create("configmaps", _cm(f"c{i}"), namespace="default")
        with pytest.raises(ApiError) as exc:
            small.events_after(start)
        assert exc.value.code == 410 and exc.value.reason == "Expired"
        assert exc.value.message.startswith(f"too old resource version: {start} (")
        assert small.events_after(small.resource_version - 1)[0].type == "ADDED"
    finally:
        small.close()


def test_events_behind_the_live_ones_keep_their_objects_as_bytes_alone(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Their dicts were what a full collection walked; they decode again, the same.
    monkeypatch.setattr(store_module, "LIVE_EVENTS", 2)
    start = store.resource_version
    created = store.create("configmaps", _cm("kept", app="x"), namespace="default")
    patched = store.patch("configmaps", "default", "kept", {"data": {"k": "w"}})
    for i in range(3):
        store.create("configmaps", _cm(f"after{i}"), namespace="default")
    first, second, *rest = store.events_after(start)
    assert first.decoded is None and second.decoded is None and rest[-1].decoded is not None
    assert (first.type, first.obj, first.prev) == ("ADDED", created, None)
    assert (second.type, second.obj, second.prev) == ("MODIFIED", patched, created)


def _woken(store: Store, resource: str, change: Any) -> bool:
    """Whether a watch of `resource`, waiting, is woken by `change()`."""
    waiting, result = threading.Event(), []
    cond = store.changed_of(resource)

    def watch() -> None:
        with cond:
            waiting.set()
            result.append(cond.wait(timeout=1.0))

    thread = threading.Thread(target=watch)
    thread.start()
    waiting.wait()
    with cond:  # the watcher is in wait() once it has released the lock
        pass
    change()
    thread.join()
    return result[0]


def test_a_change_wakes_only_the_watches_of_its_resource(store: Store) -> None:
    # Every watch woken by every change made a herd of threads queue for the GIL.
    def configmap() -> None:
        store.create("configmaps", _cm("woken"), namespace="default")

    def secret() -> None:
        store.create("secrets", {"metadata": {"name": "s"}}, namespace="default")

    assert not _woken(store, "secrets", configmap)
    assert _woken(store, "secrets", secret)
    assert _woken(store, "configmaps", lambda: store.delete("configmaps", "default", "woken"))


def test_a_quiet_resource_s_watch_is_woken_within_a_quarter_window() -> None:
    # So that its resume point follows the others' events before they leave the window.
    small = Store(None, window=8)
    try:

        def two_configmaps() -> None:
            for i in range(2):
                small.create("configmaps", _cm(f"c{i}"), namespace="default")

        assert _woken(small, "secrets", two_configmaps)
    finally:
        small.close()


def test_admission_hooks_can_mutate_and_reject(store: Store) -> None:
    def admit(op: str, new: dict[str, Any] | None, old: dict[str, Any] | None) -> None:
        if new is None:
            return
        if new["metadata"]["name"] == "reject":
            raise invalid("ConfigMap", "", "reject", [FieldError("Invalid", "data", "x", "no")])
        new.setdefault("data", {})["admitted"] = op

    store.register_admission("configmaps", admit)
    assert store.create("configmaps", _cm("ok"), namespace="default")["data"]["admitted"] == (
        "CREATE"
    )
    with pytest.raises(ApiError) as exc:
        store.create("configmaps", _cm("reject"), namespace="default")
    assert exc.value.code == 422
    with pytest.raises(ApiError):
        store.get("configmaps", "default", "reject")


def test_pods_bound_to_a_node_terminate_gracefully(store: Store) -> None:
    pod = {
        "metadata": {"name": "p"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "pause"}]},
    }
    store.create("pods", pod, namespace="default")
    pending = store.delete("pods", "default", "p")
    assert pending["metadata"]["deletionGracePeriodSeconds"] == 30
    assert store.get("pods", "default", "p")["metadata"]["deletionTimestamp"]
    store.delete("pods", "default", "p", grace_period_seconds=0)
    with pytest.raises(ApiError):
        store.get("pods", "default", "p")


def test_bind_assigns_the_node_once(store: Store) -> None:
    pod = {"metadata": {"name": "b"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    store.create("pods", pod, namespace="default")
    store.bind("default", "b", {"target": {"kind": "Node", "name": "n1"}})
    assert store.get("pods", "default", "b")["spec"]["nodeName"] == "n1"
    with pytest.raises(ApiError) as exc:
        store.bind("default", "b", {"target": {"kind": "Node", "name": "n2"}})
    assert exc.value.code == 409


def test_dry_run_writes_nothing(store: Store) -> None:
    rv = store.resource_version
    store.create("configmaps", _cm("dry"), namespace="default", dry_run=True)
    assert store.resource_version == rv
    assert store.list("configmaps", "default", field_selector="metadata.name=dry") == []
