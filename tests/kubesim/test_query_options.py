"""Query options are read as apimachinery's parameter codec reads them: a single-valued option
given twice takes its first value (url.Values.Get), integers parse as strconv.ParseInt with
its errors, and a boolean is false only when "0" or "false"."""

from __future__ import annotations

import json

import pytest
from kubernetes import client

from tests.kubesim.support import raw

Api = client.ApiClient


def _cms(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/configmaps"


def _config_maps(api: Api, namespace: str) -> None:
    core = client.CoreV1Api(api)
    for name, labels in (("q1", {"a": "1"}), ("q2", {"a": "2"}), ("q3", {"b": "3"})):
        core.create_namespaced_config_map(namespace, {"metadata": {"name": name, "labels": labels}})


def _names(api: Api, path: str) -> list[str]:
    resp = raw(api, "GET", path)
    assert resp.status == 200
    return sorted(item["metadata"]["name"] for item in resp.json()["items"])


def test_a_list_option_given_twice_takes_the_first(kube_api_client: Api, namespace: str) -> None:
    _config_maps(kube_api_client, namespace)
    path = _cms(namespace)
    assert _names(kube_api_client, f"{path}?labelSelector=a&labelSelector=b") == ["q1", "q2"]
    by_name = "fieldSelector=metadata.name%3Dq1&fieldSelector=metadata.name%3Dq3"
    assert _names(kube_api_client, f"{path}?{by_name}") == ["q1"]
    assert len(_names(kube_api_client, f"{path}?labelSelector=a&limit=1&limit=2")) == 1
    assert len(_names(kube_api_client, f"{path}?labelSelector=a&limit=2&limit=1")) == 2
    assert raw(kube_api_client, "GET", f"{path}?limit=1&limit=x").status == 200


def test_a_write_option_given_twice_takes_the_first(kube_api_client: Api, namespace: str) -> None:
    path = _cms(namespace)
    resp = raw(
        kube_api_client,
        "POST",
        f"{path}?fieldManager=first&fieldManager=second",
        body={"metadata": {"name": "cm"}, "data": {"k": "v"}},
    )
    assert [m["manager"] for m in resp.json()["metadata"]["managedFields"]] == ["first"]
    unknown = {"metadata": {"name": "strict"}, "bogus": 1}
    resp = raw(
        kube_api_client,
        "POST",
        f"{path}?fieldValidation=Strict&fieldValidation=Ignore",
        body=unknown,
    )
    assert (resp.status, resp.json()["message"]) == (
        400,
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'unknown field "bogus"',
    )
    gone = f"{path}/cm?dryRun=All&propagationPolicy=Bogus&propagationPolicy=Orphan"
    assert raw(kube_api_client, "DELETE", gone).status == 422
    kept = f"{path}/cm?dryRun=All&propagationPolicy=Orphan&propagationPolicy=Bogus"
    assert raw(kube_api_client, "DELETE", kept).status == 200


@pytest.mark.parametrize(
    ("method", "query", "error"),
    [
        ("GET", "limit=x", 'parsing "x": invalid syntax'),
        ("GET", "limit=", 'parsing "": invalid syntax'),
        ("GET", "limit=1.5", 'parsing "1.5": invalid syntax'),
        ("GET", "limit=99999999999999999999", 'parsing "99999999999999999999": value out of range'),
        ("GET", "timeoutSeconds=x", 'parsing "x": invalid syntax'),
        ("GET", "limit=x&timeoutSeconds=y", 'parsing "y": invalid syntax'),
        ("DELETE", "gracePeriodSeconds=x", 'parsing "x": invalid syntax'),
        ("DELETE", "gracePeriodSeconds=", 'parsing "": invalid syntax'),
    ],
)
def test_an_integer_option_that_does_not_parse_is_refused_as_go_parses_it(
    kube_api_client: Api, namespace: str, method: str, query: str, error: str
) -> None:
    target = _cms(namespace) + ("/absent" if method == "DELETE" else "")
    resp = raw(kube_api_client, method, f"{target}?{query}&dryRun=All")
    assert (resp.status, resp.json()["message"]) == (400, f"strconv.ParseInt: {error}")


def test_a_limit_that_is_not_positive_lists_everything(
    kube_api_client: Api, namespace: str
) -> None:
    _config_maps(kube_api_client, namespace)
    for limit in ("0", "-5"):
        resp = raw(kube_api_client, "GET", f"{_cms(namespace)}?labelSelector=a&limit={limit}")
        assert len(resp.json()["items"]) == 2
        assert "continue" not in resp.json()["metadata"]
    resp = raw(kube_api_client, "GET", f"{_cms(namespace)}?labelSelector=a&limit=%2B1")
    assert len(resp.json()["items"]) == 1


@pytest.mark.parametrize(("watch", "watches"), [("x", True), ("True", True), ("FALSE", False)])
def test_watch_is_false_only_when_it_says_false_or_0(
    kube_api_client: Api, namespace: str, watch: str, watches: bool
) -> None:
    _config_maps(kube_api_client, namespace)
    resp = raw(
        kube_api_client,
        "GET",
        f"{_cms(namespace)}?labelSelector=b&watch={watch}&watch=false&timeoutSeconds=1",
    )
    first = json.loads(resp.data.splitlines()[0])
    if watches:
        assert (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", "q3")
    else:
        assert first["kind"] == "ConfigMapList"
