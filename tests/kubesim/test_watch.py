"""Watch: events in order, resume from a resourceVersion, bookmarks, timeouts, 410 Expired."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from kubernetes import client, watch

from kubesim import store as store_module
from tests.kubesim.support import auth_headers, raw

Api = client.ApiClient


def _cm(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}


def _collect(stream: Any, count: int) -> list[tuple[str, str]]:
    out = []
    for ev in stream:
        out.append((ev["type"], ev["object"].metadata.name))
        if len(out) == count:
            break
    return out


def test_watch_from_resource_version_sees_changes_in_order(
    kube_api_client: Api, namespace: str
) -> None:
    core = client.CoreV1Api(kube_api_client)
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    core.create_namespaced_config_map(namespace, _cm("a"))
    core.patch_namespaced_config_map("a", namespace, {"data": {"k": "w"}})
    core.delete_namespaced_config_map("a", namespace)
    w = watch.Watch()
    events = _collect(
        w.stream(
            core.list_namespaced_config_map, namespace, resource_version=rv, timeout_seconds=5
        ),
        3,
    )
    w.stop()
    assert events == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]


def test_watch_without_resource_version_starts_with_current_state(
    kube_api_client: Api, namespace: str
) -> None:
    core = client.CoreV1Api(kube_api_client)
    core.create_namespaced_config_map(namespace, _cm("existing"))
    w = watch.Watch()
    events = _collect(w.stream(core.list_namespaced_config_map, namespace, timeout_seconds=5), 1)
    w.stop()
    assert events == [("ADDED", "existing")]


def test_a_listing_larger_than_one_write_arrives_whole_and_in_order(
    kube_api_client: Api, namespace: str
) -> None:
    """The initial ADDED events go out in bounded writes (kubesim.watch.LISTING_CHUNK):
    none is lost or split across the boundaries, and the selector still applies."""
    core = client.CoreV1Api(kube_api_client)
    big = "x" * 100_000  # four of them pass one write's bound
    names = [f"big-{i}" for i in range(7)]
    for i, name in enumerate(names):
        body = {"metadata": {"name": name, "labels": {"keep": str(i % 2 == 0).lower()}}}
        core.create_namespaced_config_map(namespace, {**body, "data": {"k": big}})
    w = watch.Watch()
    stream = w.stream(
        core.list_namespaced_config_map, namespace, label_selector="keep=true", timeout_seconds=5
    )
    seen = []
    for ev in stream:
        seen.append((ev["type"], ev["object"].metadata.name, len(ev["object"].data["k"])))
        if len(seen) == 4:
            break
    w.stop()
    assert seen == [("ADDED", name, len(big)) for name in names[::2]]


def test_watch_delivers_live_events(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    got: list[tuple[str, str]] = []
    w = watch.Watch()
    started = threading.Event()

    def run() -> None:
        started.set()
        got.extend(
            _collect(
                w.stream(
                    core.list_namespaced_config_map,
                    namespace,
                    resource_version=rv,
                    timeout_seconds=10,
                ),
                2,
            )
        )

    t = threading.Thread(target=run)
    t.start()
    started.wait()
    core.create_namespaced_config_map(namespace, _cm("live"))
    core.delete_namespaced_config_map("live", namespace)
    t.join(timeout=15)
    assert got == [("ADDED", "live"), ("DELETED", "live")]


def test_label_selector_transitions_become_added_and_deleted(
    kube_api_client: Api, namespace: str
) -> None:
    core = client.CoreV1Api(kube_api_client)
    core.create_namespaced_config_map(namespace, _cm("sel", app="x"))
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    core.patch_namespaced_config_map("sel", namespace, {"metadata": {"labels": {"app": "y"}}})
    core.patch_namespaced_config_map("sel", namespace, {"metadata": {"labels": {"app": "x"}}})
    w = watch.Watch()
    events = _collect(
        w.stream(
            core.list_namespaced_config_map,
            namespace,
            label_selector="app=x",
            resource_version=rv,
            timeout_seconds=5,
        ),
        2,
    )
    w.stop()
    assert events == [("DELETED", "sel"), ("ADDED", "sel")]


@pytest.mark.kubesim_only  # shrinks kubesim's count of events kept decoded
def test_a_watch_resuming_behind_the_live_events_sees_the_same_changes(
    kube_api_client: Api, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "LIVE_EVENTS", 2)
    core = client.CoreV1Api(kube_api_client)
    core.create_namespaced_config_map(namespace, _cm("sel", app="x"))
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    core.patch_namespaced_config_map("sel", namespace, {"metadata": {"labels": {"app": "y"}}})
    core.patch_namespaced_config_map(
        "sel", namespace, {"metadata": {"labels": {"app": "x"}}, "data": {"k": "back"}}
    )
    for i in range(3):  # the changes above are no longer among the live events
        core.create_namespaced_config_map(namespace, _cm(f"later{i}"))
    w = watch.Watch()
    stream = w.stream(
        core.list_namespaced_config_map,
        namespace,
        label_selector="app=x",
        resource_version=rv,
        timeout_seconds=2,
    )
    events = [(ev["type"], ev["object"].metadata.name, ev["object"].data) for ev in stream]
    assert events == [("DELETED", "sel", {"k": "v"}), ("ADDED", "sel", {"k": "back"})]


def test_watch_ends_after_timeout_seconds(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    events = list(
        watch.Watch().stream(
            core.list_namespaced_config_map, namespace, resource_version=rv, timeout_seconds=1
        )
    )
    assert events == []


def test_a_negative_timeout_ends_the_watch_before_it_starts(
    kube_api_client: Api, namespace: str
) -> None:
    core = client.CoreV1Api(kube_api_client)
    core.create_namespaced_config_map(namespace, _cm("c"))
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    path = f"/api/v1/namespaces/{namespace}/configmaps?watch=true"
    # Without a resourceVersion: an empty stream, not even the current state.
    for query in ("timeoutSeconds=-1", "timeoutSeconds=-5"):
        resp = raw(kube_api_client, "GET", f"{path}&{query}")
        assert (resp.status, resp.data) == (200, b""), query
    # From a resourceVersion, the watch cache races the expired context: mostly an empty
    # stream or the context's 503 (kubesim: the 503 when it holds that version, 0 included).
    expired = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "context deadline exceeded",
        "reason": "ServiceUnavailable",
        "code": 503,
    }
    for version in ("0", rv, str(int(rv) + 1000)):
        resp = raw(kube_api_client, "GET", f"{path}&resourceVersion={version}&timeoutSeconds=-1")
        if resp.status == 200:  # now and then the current state still makes it out
            events = [json.loads(line) for line in resp.data.splitlines()]
            assert {e["type"] for e in events} <= {"ADDED"}, version
        else:
            assert (resp.status, resp.json()) == (503, expired), version
    # 0 is no timeout: the server's own, and the watch starts with the current state.
    w = watch.Watch()
    stream = w.stream(core.list_namespaced_config_map, namespace, timeout_seconds=0)
    assert _collect(stream, 1) == [("ADDED", "c")]
    w.stop()


def test_a_watch_that_ended_leaves_its_connection_for_the_next_request(
    kube_api_client: Api, namespace: str
) -> None:
    """A stream ended by its last chunk keeps the connection alive: a client that reuses it
    at once (as urllib3 does when it has not yet seen the server close it) is answered."""
    core = client.CoreV1Api(kube_api_client)
    core.create_namespaced_config_map(namespace, _cm("c"))
    headers = {"Accept": "application/json", **auth_headers(kube_api_client)}
    pool = kube_api_client.rest_client.pool_manager.connection_from_url(
        kube_api_client.configuration.host
    )
    conn = pool._get_conn()  # one connection, driven by hand: no reconnecting behind our back
    try:
        path = f"/api/v1/namespaces/{namespace}/configmaps"
        for query in ("?watch=true&timeoutSeconds=-1", "?watch=true&timeoutSeconds=1", ""):
            conn.request("GET", path + query, headers=headers)
            resp = conn.getresponse()
            body = resp.data
            assert resp.status == 200, (query, body)
            assert resp.headers.get("Connection", "").lower() != "close", query
        assert json.loads(body)["items"][0]["metadata"]["name"] == "c"
    finally:
        conn.close()


def test_bookmark_before_the_watch_times_out(kube_api_client: Api, namespace: str) -> None:
    """kube-apiserver's watch cache sends a bookmark only at a version newer than the watch's
    start, the newest event of the resource it dispatched (of any namespace or selector):
    on a quiet resource, none. So a ConfigMap the watch does not select changes meanwhile."""
    core = client.CoreV1Api(kube_api_client)
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    created: list[str] = []

    def change_one_it_does_not_select() -> None:
        time.sleep(0.5)  # usually once the watch has begun; either way after `rv`
        cm = core.create_namespaced_config_map(namespace, _cm("other", team="b"))
        created.append(cm.metadata.resource_version)

    changer = threading.Thread(target=change_one_it_does_not_select)
    changer.start()
    resp = raw(
        kube_api_client,
        "GET",
        f"/api/v1/namespaces/{namespace}/configmaps?watch=true&resourceVersion={rv}"
        "&labelSelector=team%3Da&allowWatchBookmarks=true&timeoutSeconds=5",
    )
    changer.join()
    events = [json.loads(line) for line in resp.data.splitlines() if line]
    assert [e["type"] for e in events if e["type"] != "BOOKMARK"] == [], events
    bookmarks = [e for e in events if e["type"] == "BOOKMARK"]
    assert bookmarks, events
    assert bookmarks[-1]["object"]["kind"] == "ConfigMap"
    assert int(bookmarks[-1]["object"]["metadata"]["resourceVersion"]) >= int(created[0])


def test_send_initial_events_needs_the_watch_list_feature_gate(
    kube_api_client: Api, namespace: str
) -> None:
    resp = raw(
        kube_api_client,
        "GET",
        f"/api/v1/namespaces/{namespace}/configmaps?watch=true&allowWatchBookmarks=true"
        "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1",
    )
    assert resp.status == 422
    assert resp.json()["message"] == (
        'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: '
        "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"
    )


@pytest.mark.kubesim_only
def test_too_old_resource_version_is_410_expired(
    kube_api_client: Api, namespace: str, kubesim_server: Any
) -> None:
    core = client.CoreV1Api(kube_api_client)
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    kubesim_server.expire_next_watch(resource="configmaps")
    resp = raw(
        kube_api_client,
        "GET",
        f"/api/v1/namespaces/{namespace}/configmaps?watch=true&resourceVersion={rv}",
    )
    assert resp.status == 200  # as kube-apiserver: the error comes as a watch event

    event = json.loads(resp.data.splitlines()[0])
    assert event["type"] == "ERROR"
    assert event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"
    assert event["object"]["message"].startswith(f"too old resource version: {rv} (")
    with pytest.raises(client.ApiException) as exc:
        kubesim_server.expire_next_watch(resource="configmaps")
        list(
            watch.Watch().stream(
                core.list_namespaced_config_map, namespace, resource_version=rv, timeout_seconds=2
            )
        )
    assert exc.value.status == 410


def test_watch_as_table_for_kubectl_get_watch(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    core.create_namespaced_config_map(namespace, _cm("tw"))
    resp = raw(
        kube_api_client,
        "GET",
        f"/api/v1/namespaces/{namespace}/configmaps?watch=true&timeoutSeconds=1"
        "&fieldSelector=metadata.name%3Dtw",
        accept="application/json;as=Table;v=v1;g=meta.k8s.io",
    )
    [line] = [json.loads(x) for x in resp.data.splitlines() if x]
    assert line["type"] == "ADDED"
    table = line["object"]
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert table["rows"][0]["cells"][:2] == ["tw", 1]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
