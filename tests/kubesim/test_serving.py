"""Requests first: the controllers' thread gives way to requests being served."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from kubernetes import client

from kubesim.cluster.workqueue import WorkQueue
from kubesim.serving import Serving
from tests.fixtures.kubesim import KubesimHandle


def _in_thread(target: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def test_with_no_request_in_flight_the_controllers_go_on() -> None:
    serving = Serving(max_wait=60)
    gave_way = _in_thread(serving.give_way)
    gave_way.join(5)
    assert not gave_way.is_alive()


def test_the_controllers_wait_for_the_requests_in_flight() -> None:
    serving = Serving(max_wait=60)
    order: list[str] = []
    entered, finish = threading.Event(), threading.Event()

    def request() -> None:
        with serving.request():
            entered.set()
            finish.wait(10)
            order.append("request served")

    def controllers() -> None:
        serving.give_way()
        order.append("controllers went on")

    served = _in_thread(request)
    assert entered.wait(5)
    waiting = _in_thread(controllers)
    waiting.join(0.2)
    finish.set()
    for thread in (served, waiting):
        thread.join(5)
    assert order == ["request served", "controllers went on"]


def test_the_controllers_wait_no_longer_than_max_wait() -> None:
    serving = Serving(max_wait=0.05)
    with serving.request():
        waiting = _in_thread(serving.give_way)
        waiting.join(10)
        assert not waiting.is_alive()  # returned while the request is still being served


def test_the_work_queue_gives_way_before_each_item() -> None:
    calls: list[str] = []
    handled = threading.Semaphore(0)

    def handle(controller: str, key: object) -> None:
        calls.append(f"{controller} {key}")
        handled.release()

    queue = WorkQueue(handle, lambda _: "controllers", give_way=lambda: calls.append("give way"))
    queue.start()
    try:
        queue.add("rs", "a")
        assert handled.acquire(timeout=5)
        queue.add("rs", "b")
        assert handled.acquire(timeout=5)
    finally:
        queue.stop()
    assert calls == ["give way", "rs a", "give way", "rs b"]


class _Counting(Serving):
    def __init__(self) -> None:
        super().__init__()
        self.served = 0

    @contextmanager
    def request(self) -> Iterator[None]:
        self.served += 1
        with super().request():
            yield


@pytest.mark.kubesim_only
def test_the_server_counts_requests_but_not_watches(
    kubesim_server: KubesimHandle, kube_api_client: client.ApiClient, namespace: str
) -> None:
    sim = kubesim_server.sim
    assert sim is not None  # kubesim_only
    core = client.CoreV1Api(kube_api_client)
    counting, kept = _Counting(), sim.serving
    sim.serving = counting
    try:
        version = core.list_namespaced_config_map(namespace).metadata.resource_version
        assert counting.served == 1
        core.list_namespaced_config_map(
            namespace,
            watch=True,
            resource_version=version,
            timeout_seconds=1,
            _preload_content=False,
        ).read()
        assert counting.served == 1
    finally:
        sim.serving = kept
