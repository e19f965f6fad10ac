"""controllers.kube against kubesim through the official client: no mocks."""

from __future__ import annotations

import logging
import random
import threading
from typing import Any

import pytest

from controllers.base import SERVICE, PermanentError, TemporaryError
from controllers.kube import AlreadyAllocated, ApiKube, Conflict, EventRecorder, Gone
from tests.engine.toy import CONFIGMAP, TOY, toy

EVENTS = CONFIGMAP.__class__("", "v1", "Event", "events")


def configmap(name: str, namespace: str, **data: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace}, "data": data}


def test_create_get_patch_delete(api: ApiKube, namespace: str) -> None:
    created = api.create(CONFIGMAP, configmap("a", namespace, size="1"))
    assert api.get(CONFIGMAP, namespace, "a")["data"] == {"size": "1"}
    patched = api.patch(CONFIGMAP, namespace, "a", {"data": {"size": "2"}})
    assert patched["data"]["size"] == "2"
    assert patched["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    api.delete(CONFIGMAP, namespace, "a")
    api.delete(CONFIGMAP, namespace, "a")  # already gone: no error
    assert api.get(CONFIGMAP, namespace, "a") is None


def test_a_patch_from_a_stale_resource_version_is_a_conflict(api: ApiKube, namespace: str) -> None:
    created = api.create(CONFIGMAP, configmap("a", namespace, size="1"))
    api.patch(CONFIGMAP, namespace, "a", {"data": {"size": "2"}})
    with pytest.raises(Conflict):
        api.patch(
            CONFIGMAP,
            namespace,
            "a",
            {"data": {"size": "3"}},
            resource_version=created["metadata"]["resourceVersion"],
        )
    assert api.get(CONFIGMAP, namespace, "a")["data"]["size"] == "2"


def test_creating_an_existing_object_is_a_conflict(api: ApiKube, namespace: str) -> None:
    api.create(CONFIGMAP, configmap("a", namespace))
    with pytest.raises(Conflict):
        api.create(CONFIGMAP, configmap("a", namespace))


def test_an_invalid_request_is_permanent(api: ApiKube, namespace: str) -> None:
    with pytest.raises(PermanentError):
        api.create(CONFIGMAP, {"metadata": {"namespace": namespace}})  # no name


def test_a_nodeport_another_service_holds_is_temporary_not_permanent(
    api: ApiKube, namespace: str
) -> None:
    port = random.randint(30100, 32700)

    def service(name: str) -> dict[str, Any]:
        return {"metadata": {"name": name, "namespace": namespace},
                "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": port}]}}  # fmt: skip

    api.create(SERVICE, service("first"))
    with pytest.raises(AlreadyAllocated) as refused:
        api.create(SERVICE, service("second"))
    assert isinstance(refused.value, TemporaryError)  # it clears once "first" goes
    api.delete(SERVICE, namespace, "first")
    assert api.create(SERVICE, service("second"))["spec"]["ports"][0]["nodePort"] == port


def test_list_pages_through_everything(api: ApiKube, namespace: str) -> None:
    for i in range(7):
        api.create(CONFIGMAP, configmap(f"c{i}", namespace))
    items, version = api.list(CONFIGMAP, namespace, limit=3)
    ours = sorted(i["metadata"]["name"] for i in items if i["metadata"]["name"][:1] == "c")
    assert ours == [f"c{i}" for i in range(7)]  # beside kube-root-ca.crt, as on a cluster
    assert version


def test_watch_streams_changes_after_the_listed_version(api: ApiKube, namespace: str) -> None:
    _, version = api.list(CONFIGMAP, namespace)
    api.create(CONFIGMAP, configmap("a", namespace))
    api.patch(CONFIGMAP, namespace, "a", {"data": {"x": "1"}})
    api.delete(CONFIGMAP, namespace, "a")
    seen = []
    for type_, body in api.watch(CONFIGMAP, namespace, resource_version=version, timeout_seconds=2):
        if type_ != "BOOKMARK":
            seen.append((type_, body["metadata"]["name"]))
        if len(seen) == 3:
            break
    assert seen == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]


def test_watches_ending_together_keep_their_connections_quietly(
    api: ApiKube, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The watcher holds a stream per kind (13 of them) besides its other requests; when
    they end together (their common timeout, the server stopping), a pool smaller than
    that discarded the surplus with a warning for each."""
    _, version = api.list(CONFIGMAP, namespace)
    ready = threading.Barrier(14)

    def stream() -> None:
        ready.wait()
        list(api.watch(CONFIGMAP, namespace, resource_version=version, timeout_seconds=1))

    threads = [threading.Thread(target=stream) for _ in range(13)]
    with caplog.at_level(logging.WARNING, logger="urllib3"):
        for thread in threads:
            thread.start()
        ready.wait()
        for thread in threads:
            thread.join(30)
    assert not any(t.is_alive() for t in threads)
    assert [r.getMessage() for r in caplog.records if r.name.startswith("urllib3")] == []


@pytest.mark.kubesim_only
def test_an_expired_watch_raises_gone(api: ApiKube, namespace: str, kubesim_server: Any) -> None:
    _, version = api.list(CONFIGMAP, namespace)
    kubesim_server.expire_next_watch(resource="configmaps")
    with pytest.raises(Gone):
        list(api.watch(CONFIGMAP, namespace, resource_version=version, timeout_seconds=2))


def test_repeated_events_are_aggregated_into_one_with_a_count(
    api: ApiKube, namespace: str, toy_crd: None
) -> None:
    cr = api.create(TOY, toy("t", namespace))
    recorder = EventRecorder(api)
    for _ in range(3):
        recorder.post(cr, "Warning", "ReconcileError", "boom")
    recorder.post(cr, "Normal", "Created", "Created ConfigMap t")
    EventRecorder(api).post(cr, "Warning", "ReconcileError", "boom")  # another process
    events, _ = api.list(EVENTS, namespace)
    counts = {(e["reason"], e["count"]) for e in events if e["involvedObject"]["name"] == "t"}
    assert counts == {("ReconcileError", 4), ("Created", 1)}


def test_many_different_messages_of_one_reason_are_combined_into_one_series(
    api: ApiKube, namespace: str, toy_crd: None
) -> None:
    cr = api.create(TOY, toy("t", namespace))
    recorder = EventRecorder(api)
    said = [
        f"Scaled Deployment t replicas {n}→{n + 1}" for n in range(EventRecorder.SIMILAR_MAX + 3)
    ]
    for message in said:
        recorder.post(cr, "Normal", "Scaled", message)
    events, _ = api.list(EVENTS, namespace)
    mine = [e for e in events if e["involvedObject"]["name"] == "t"]
    assert len(mine) == EventRecorder.SIMILAR_MAX + 1
    [combined] = [e for e in mine if e["count"] > 1]
    assert combined["count"] == 3
    assert combined["message"] == f"(combined from similar events): {said[-1]}"
    assert {e["message"] for e in mine if e["count"] == 1} == set(said[: EventRecorder.SIMILAR_MAX])
