"""HTTP fault injection and the request log, through the Python API, HTTP and the CLI."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from kubernetes import client, watch

from tests.kubesim.support import kubesim_cli, raw

pytestmark = pytest.mark.kubesim_only

Api = client.ApiClient


def _cms(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/configmaps"


def test_request_log_records_each_call(
    kube_api_client: Api, namespace: str, kubesim_server: Any
) -> None:
    kubesim_server.clear_request_log()
    core = client.CoreV1Api(kube_api_client)
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "log"}})
    core.read_namespaced_config_map("log", namespace)
    records = kubesim_server.request_log(resource="configmaps")
    assert [(r.method, r.verb, r.status, r.name) for r in records] == [
        ("POST", "create", 201, ""),
        ("GET", "get", 200, "log"),
    ]
    assert all(r.namespace == namespace and r.duration_ms >= 0 for r in records)
    assert records[0].user_agent.startswith("OpenAPI-Generator")


def test_request_log_over_http(kube_api_client: Api, namespace: str, kubesim_server: Any) -> None:
    raw(kube_api_client, "DELETE", "/_kubesim/requests")
    raw(kube_api_client, "GET", _cms(namespace))
    items = raw(kube_api_client, "GET", "/_kubesim/requests?verb=list").json()["items"]
    assert [(i["path"], i["resource"], i["status"]) for i in items] == [
        (_cms(namespace), "configmaps", 200)
    ]


def test_errors_for_the_next_n_requests(
    kube_api_client: Api, namespace: str, kubesim_server: Any
) -> None:
    kubesim_server.add_error(503, verb="list", resource="configmaps", count=2)
    codes = [raw(kube_api_client, "GET", _cms(namespace)).status for _ in range(3)]
    assert codes == [503, 503, 200]


def test_conflict_fault_looks_like_a_stale_write(
    kube_api_client: Api, namespace: str, kubesim_server: Any
) -> None:
    core = client.CoreV1Api(kube_api_client)
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "c"}})
    kubesim_server.add_error(409, verb="patch", resource="configmaps", count=1)
    with pytest.raises(client.ApiException) as exc:
        core.patch_namespaced_config_map("c", namespace, {"data": {"a": "b"}})
    body = json.loads(exc.value.body)
    assert exc.value.status == 409 and body["reason"] == "Conflict"
    assert "the object has been modified" in body["message"]
    assert core.read_namespaced_config_map("c", namespace).data is None


def test_probability_is_deterministic_under_a_seed(
    kube_api_client: Api, namespace: str, kubesim_server: Any
) -> None:
    def run() -> list[int]:
        kubesim_server.clear_faults()
        kubesim_server.seed_faults(7)
        kubesim_server.add_error(500, verb="list", resource="configmaps", probability=0.5)
        return [raw(kube_api_client, "GET", _cms(namespace)).status for _ in range(20)]

    first, second = run(), run()
    assert first == second
    assert 500 in first and 200 in first


def test_latency_applies_to_matching_requests_only(
    kube_api_client: Api, namespace: str, kubesim_server: Any
) -> None:
    kubesim_server.clear_request_log()
    fault = kubesim_server.add_latency(30, verb="list", resource="configmaps", count=1)
    raw(kube_api_client, "GET", _cms(namespace))
    raw(kube_api_client, "GET", f"{_cms(namespace)}/none")
    records = kubesim_server.request_log(resource="configmaps")
    assert [r.fault for r in records] == [None, None]  # latency is not an error
    assert fault.hits == 1
    assert kubesim_server.sim.faults.list() == []  # count=1: used up


def test_faults_over_http(kube_api_client: Api, namespace: str) -> None:
    made = raw(
        kube_api_client,
        "POST",
        "/_kubesim/faults",
        body={
            "type": "error",
            "code": 429,
            "verb": "list",
            "resource": "configmaps",
            "count": 1,
            "retry_after": 2,
        },
    )
    assert made.status == 201
    listed = raw(kube_api_client, "GET", "/_kubesim/faults").json()["items"]
    assert [f["code"] for f in listed] == [429]
    resp = raw(kube_api_client, "GET", _cms(namespace))
    assert resp.status == 429 and resp.headers["Retry-After"] == "2"
    assert raw(kube_api_client, "GET", "/_kubesim/faults").json()["items"] == []
    raw(
        kube_api_client,
        "POST",
        "/_kubesim/faults",
        body={"type": "latency", "latency_ms": 1, "jitter_ms": 1},
    )
    assert raw(kube_api_client, "DELETE", "/_kubesim/faults").status == 200
    assert raw(kube_api_client, "GET", "/_kubesim/faults").json()["items"] == []
    bad = raw(kube_api_client, "POST", "/_kubesim/faults", body={"type": "nonsense"})
    assert bad.status == 400


def test_fault_cli(kubesim_server: Any, kube_api_client: Api, namespace: str) -> None:
    def cli(*args: str) -> Any:
        return kubesim_cli(kubesim_server.url, "fault", *args)

    made = cli(
        "error", "--code", "500", "--verb", "get", "--resource", "configmaps", "--count", "1"
    )
    assert made["code"] == 500 and made["count"] == 1
    assert [f["id"] for f in cli("list")["items"]] == [made["id"]]
    assert raw(kube_api_client, "GET", f"{_cms(namespace)}/x").status == 500
    cli("latency", "--ms", "1")
    cli("clear")
    assert cli("list")["items"] == []


def test_closing_watches_ends_open_streams(
    kube_api_client: Api, namespace: str, kubesim_server: Any
) -> None:
    core = client.CoreV1Api(kube_api_client)
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    ended = threading.Event()

    def run() -> None:
        for _ in watch.Watch().stream(
            core.list_namespaced_config_map, namespace, resource_version=rv, timeout_seconds=30
        ):
            pass
        ended.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    for _ in range(100):
        if kubesim_server.request_log(verb="watch", resource="configmaps"):
            break
        threading.Event().wait(0.02)
    # The request is logged as it arrives, a moment before its stream is registered: a
    # close in between finds nothing to close, so close again until the stream ends.
    for _ in range(20):
        kubesim_server.close_watches("configmaps")
        if ended.wait(0.5):
            break
    assert ended.is_set(), "the watch stream stayed open"


def test_expired_watch_resume_over_http(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    raw(
        kube_api_client,
        "POST",
        "/_kubesim/faults",
        body={"type": "expire-watch", "resource": "configmaps"},
    )
    with pytest.raises(client.ApiException) as exc:
        list(
            watch.Watch().stream(
                core.list_namespaced_config_map, namespace, resource_version=rv, timeout_seconds=2
            )
        )
    assert exc.value.status == 410
    events = list(
        watch.Watch().stream(
            core.list_namespaced_config_map, namespace, resource_version=rv, timeout_seconds=1
        )
    )
    assert events == []
