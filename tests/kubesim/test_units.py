"""Pure parts: selectors, patches, structural schemas and the request log."""

from __future__ import annotations

import pytest

from kubesim.errors import ApiError
from kubesim.faults import RequestLog, RequestRecord
from kubesim.patch import json_patch, merge_patch, strategic_merge
from kubesim.schema import process
from kubesim.selectors import parse_fields, parse_labels, selector_string


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ("a=b", {"a": "b"}, True),
        ("a=b", {"a": "c"}, False),
        ("a!=b", {}, True),
        ("a in (x, y)", {"a": "y"}, True),
        ("a notin (x)", {"a": "x"}, False),
        ("a", {"a": ""}, True),
        ("!a", {"a": ""}, False),
        ("a>3", {"a": "4"}, True),
        ("a<3", {"a": "4"}, False),
        ("a=b,c", {"a": "b"}, False),
        ("example.com/role==web", {"example.com/role": "web"}, True),
    ],
)
def test_label_selector_syntax(selector: str, labels: dict[str, str], expected: bool) -> None:
    match = parse_labels(selector)
    assert match is not None and match(labels) is expected


@pytest.mark.parametrize("selector", ["a in (b", "a=b=c", "=x", "a in b"])
def test_malformed_label_selectors_are_400(selector: str) -> None:
    with pytest.raises(ApiError) as exc:
        parse_labels(selector)
    assert exc.value.code == 400


def test_field_selectors_know_the_pod_fields() -> None:
    match = parse_fields("pods", "spec.nodeName=n1,status.phase!=Failed")
    assert match is not None
    assert match({"metadata": {}, "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}})
    assert not match({"metadata": {}, "spec": {"nodeName": "n1"}, "status": {"phase": "Failed"}})
    with pytest.raises(ApiError):
        parse_fields("configmaps", "spec.nodeName=n1")


def test_selector_string_renders_match_expressions() -> None:
    sel = {
        "matchLabels": {"b": "2", "a": "1"},
        "matchExpressions": [{"key": "c", "operator": "In", "values": ["y", "x"]}],
    }
    assert selector_string(sel) == "a=1,b=2,c in (x,y)"


def test_merge_patch_removes_nulls_and_replaces_lists() -> None:
    doc = {"a": {"b": 1, "c": 2}, "l": [1, 2]}
    assert merge_patch(doc, {"a": {"b": None}, "l": [3]}) == {"a": {"c": 2}, "l": [3]}


def test_json_patch_operations() -> None:
    doc = {"a": [1, 2], "b": {"c": 1}}
    ops = [
        {"op": "add", "path": "/a/-", "value": 3},
        {"op": "remove", "path": "/b/c"},
        {"op": "copy", "from": "/a/0", "path": "/d"},
        {"op": "move", "from": "/d", "path": "/e"},
        {"op": "test", "path": "/e", "value": 1},
        {"op": "replace", "path": "/a/0", "value": 0},
    ]
    assert json_patch(doc, ops) == {"a": [0, 2, 3], "b": {}, "e": 1}
    assert doc == {"a": [1, 2], "b": {"c": 1}}


def test_strategic_merge_by_keys_and_directives() -> None:
    pod = {
        "spec": {
            "containers": [
                {"name": "a", "image": "x", "env": [{"name": "E", "value": "1"}]},
                {"name": "b", "image": "y"},
            ]
        },
        "metadata": {"finalizers": ["f1"]},
    }
    patch = {
        "spec": {
            "containers": [
                {"name": "a", "env": [{"name": "F", "value": "2"}]},
                {"name": "b", "$patch": "delete"},
            ]
        },
        "metadata": {"finalizers": ["f2"]},
    }
    out = strategic_merge(pod, patch)
    assert out["spec"]["containers"] == [
        {
            "name": "a",
            "image": "x",
            "env": [{"name": "F", "value": "2"}, {"name": "E", "value": "1"}],
        }
    ]
    # as kube-apiserver orders them: the patch's items first, then the server's others
    assert out["metadata"]["finalizers"] == ["f2", "f1"]
    replaced = strategic_merge({"spec": {"a": 1, "b": 2}}, {"spec": {"$patch": "replace", "c": 3}})
    assert replaced == {"spec": {"c": 3}}
    ordered = strategic_merge(
        {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}},
        {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]}},
    )
    assert [c["name"] for c in ordered["spec"]["containers"]] == ["b", "a"]


def test_service_ports_merge_by_port() -> None:
    svc = {"spec": {"ports": [{"port": 80, "name": "http"}]}}
    out = strategic_merge(svc, {"spec": {"ports": [{"port": 443, "name": "https"}]}})
    assert [p["port"] for p in out["spec"]["ports"]] == [443, 80]
    kept = strategic_merge(
        {"spec": {"ports": [{"port": 1}, {"port": 2}, {"port": 3}]}},
        {"spec": {"ports": [{"port": 2, "name": "two"}]}},
    )
    assert [p["port"] for p in kept["spec"]["ports"]] == [1, 2, 3]


def test_schema_prunes_defaults_and_validates() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "size": {"type": "integer", "minimum": 1, "default": 1},
                    "tags": {"type": "array", "maxItems": 1, "items": {"type": "string"}},
                },
            }
        },
    }
    obj = {
        "apiVersion": "x/v1",
        "kind": "X",
        "metadata": {"name": "n"},
        "spec": {"tags": ["a", "b"], "junk": 1},
    }
    out, unknown, errors = process(schema, obj)
    assert unknown == ["spec.junk"]
    assert out["spec"]["size"] == 1
    assert [e.text() for e in errors] == ["spec.tags: Too many: 2: must have at most 1 items"]


def test_list_map_keys_must_be_unique() -> None:
    schema = {
        "type": "object",
        "properties": {
            "status": {
                "type": "object",
                "properties": {
                    "conditions": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["type"],
                        "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    },
                    "tags": {
                        "type": "array",
                        "x-kubernetes-list-type": "set",
                        "items": {"type": "string"},
                    },
                },
            }
        },
    }
    obj = {"status": {"conditions": [{"type": "Ready"}, {"type": "Ready"}], "tags": ["a", "a"]}}
    _, _, errors = process(schema, obj)
    assert [e.text() for e in errors] == [
        'status.conditions[1]: Duplicate value: map[string]interface {}{"type":"Ready"}',
        'status.tags[1]: Duplicate value: "a"',
    ]


def test_the_request_log_filters_by_verb_resource_with_or_without_group_and_time() -> None:
    log = RequestLog(limit=3)

    def record(at: float, verb: str, resource: str) -> RequestRecord:
        return RequestRecord(at, "GET", "/x", verb, resource, "", "ns", "n", 200, 0.1, "t")

    for at, verb, resource in [
        (1.0, "get", "pods"),
        (2.0, "patch", "deployments.apps"),
        (3.0, "create", "memcacheds.cache.example.com"),
        (4.0, "patch", "deployments"),
    ]:
        log.add(record(at, verb, resource))

    assert [r.time for r in log.records()] == [2.0, 3.0, 4.0]  # the oldest went: limit 3
    assert [r.time for r in log.records(verb="patch")] == [2.0, 4.0]
    assert [r.time for r in log.records(resource="deployments")] == [2.0, 4.0]
    assert [r.time for r in log.records(resource="deployments.apps")] == [2.0, 4.0]
    assert [r.time for r in log.records(resource="memcacheds")] == [3.0]
    assert [r.time for r in log.records(verb="patch", since=3.0)] == [4.0]
    assert log.records(since=3.5)[0] == record(4.0, "patch", "deployments")
