"""The work queue and the cache the controllers share."""

from __future__ import annotations

import threading
import time

from kubesim.cluster.cache import Cache
from kubesim.cluster.events import Recorder
from kubesim.cluster.workqueue import WorkQueue
from kubesim.store import Store


def pod(name: str, rv: int, owner: str | None = None, node: str | None = None) -> dict:
    meta: dict = {"name": name, "namespace": "ns", "resourceVersion": str(rv)}
    if owner:
        meta["ownerReferences"] = [{"uid": owner, "controller": True}]
    return {"metadata": meta, "spec": {"nodeName": node} if node else {}}


def test_cache_ignores_older_versions_and_late_writes_after_a_delete():
    cache = Cache(["pods"])
    cache.apply("ADDED", "pods", pod("a", 5))
    cache.apply("MODIFIED", "pods", pod("a", 3))
    assert cache.get("pods", "ns", "a")["metadata"]["resourceVersion"] == "5"

    cache.apply("DELETED", "pods", pod("a", 7))
    cache.apply("MODIFIED", "pods", pod("a", 6))  # a write that lost the race with the delete
    assert cache.get("pods", "ns", "a") is None

    cache.apply("ADDED", "pods", pod("a", 9))  # the same name, created again
    assert cache.get("pods", "ns", "a") is not None


def test_cache_indexes_by_owner_and_node_and_tells_the_listener():
    cache = Cache(["pods"])
    changes = []
    cache.listener = lambda resource, old, new: changes.append((old is None, new is None))
    cache.apply("ADDED", "pods", pod("a", 1, owner="rs-1", node="n1"))
    cache.apply("ADDED", "pods", pod("b", 2, owner="rs-1"))
    cache.apply("MODIFIED", "pods", pod("b", 3, owner="rs-2", node="n1"))

    assert [p["metadata"]["name"] for p in cache.owned("pods", "rs-1")] == ["a"]
    assert sorted(p["metadata"]["name"] for p in cache.pods_on("n1")) == ["a", "b"]
    assert changes == [(True, False), (True, False), (False, False)]


def test_work_queue_deduplicates_holds_paused_groups_and_runs_them_on_resume():
    seen: list[tuple[str, object]] = []
    done = threading.Event()

    def handle(controller: str, key: object) -> None:
        seen.append((controller, key))
        if controller == "kubelet":
            done.set()

    queue = WorkQueue(
        handle, lambda controller: "kubelet" if controller == "kubelet" else "controllers"
    )
    queue.pause("kubelet")
    queue.add("kubelet", "p")
    queue.add("kubelet", "p")
    queue.start()
    try:
        queue.add_after("rs", "x", 0.01)
        for _ in range(200):
            if ("rs", "x") in seen:
                break
            done.wait(0.01)
        assert ("kubelet", "p") not in seen
        queue.resume("kubelet")
        assert done.wait(5)
    finally:
        queue.stop()
    assert seen.count(("kubelet", "p")) == 1
    assert seen.count(("rs", "x")) == 1


def test_events_expire_after_their_ttl():
    store = Store()
    recorder = Recorder(store, ttl=1.0)
    try:
        node = {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n1", "uid": "u1"}}
        recorder.normal(node, "Starting", "Starting kubelet.", "kubelet")
        [event] = store.list("events", "default")
        assert recorder.expire() > 0  # not due yet: nothing deleted
        assert len(store.list("events", "default")) == 1
        recorder.normal(node, "Starting", "Starting kubelet.", "kubelet")  # count 2, TTL renewed
        assert store.get("events", "default", event["metadata"]["name"])["count"] == 2

        deadline = time.monotonic() + 5
        while store.list("events", "default") and time.monotonic() < deadline:
            time.sleep(recorder.expire())
        assert store.list("events", "default") == []
    finally:
        store.close()
