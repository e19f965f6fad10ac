"""fieldValidation (Ignore, Warn, Strict) with unknown and repeated fields, as kube-apiserver
v1.28 answers: Ignore says nothing, Warn (the default) sends a Warning per field, Strict
refuses the write. A repeated field is kept as Go's decoder keeps it. The bodies are sent
as written, since a Python dict cannot repeat a key."""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client

from tests.kubesim.support import raw

Api = client.ApiClient
STRATEGIC = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"
# A ConfigMap with an unknown field and a repeated one (two maps: Go merges them).
CONFIGMAP = (
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"NAME"},'
    '"data":{"a":"1"},"bogus":1,"data":{"b":"2"}}'
)


def _send(
    api: Api, method: str, path: str, body: str, query: str, ctype: str = "application/json"
) -> Any:
    return raw(api, method, f"{path}?{query}", body=body.encode(), content_type=ctype)


def _warnings(resp: Any) -> list[str]:
    return list(resp.headers.getlist("Warning"))


def test_ignore_says_nothing_of_unknown_or_repeated_fields(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = _send(
        kube_api_client, "POST", path, CONFIGMAP.replace("NAME", "c"), "fieldValidation=Ignore"
    )
    assert created.status == 201, created.data
    assert _warnings(created) == []
    assert created.json()["data"] == {"a": "1", "b": "2"}
    assert "bogus" not in created.json()
    body = CONFIGMAP.replace("NAME", "c")
    for method, ctype in (("PUT", "application/json"), ("PATCH", MERGE), ("PATCH", STRATEGIC)):
        resp = _send(kube_api_client, method, f"{path}/c", body, "fieldValidation=Ignore", ctype)
        assert (resp.status, _warnings(resp)) == (200, []), resp.data
    # Warn, and no option at all, name each field.
    for query in ("fieldValidation=Warn", ""):
        resp = _send(kube_api_client, "PUT", f"{path}/c", body, query)
        assert _warnings(resp) == [
            '299 - "unknown field \\"bogus\\""',
            '299 - "duplicate field \\"data\\""',
        ]


def test_repeated_fields_warn_in_the_body_s_order_and_merge_as_go_decodes_them(
    kube_api_client: Api, namespace: str
) -> None:
    # Maps and structs given twice are merged, a list's items by index; a scalar's last wins.
    service = (
        '{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","labels":{"a":"1"},'
        '"labels":{"b":"2"}},"zzz":1,"spec":{"ports":[{"port":80,"name":"a","protocol":"UDP"}],'
        '"bogus":3,"ports":[{"port":81}],"selector":{"x":"1"},"type":"ClusterIP",'
        '"type":"NodePort"},"aaa":2}'
    )
    path = f"/api/v1/namespaces/{namespace}/services"
    created = _send(kube_api_client, "POST", path, service, "dryRun=All")
    assert created.status == 201, created.data
    fields = [
        'duplicate field "metadata.labels"',
        'unknown field "zzz"',
        'unknown field "spec.bogus"',
        'duplicate field "spec.ports"',
        'duplicate field "spec.type"',
        'unknown field "aaa"',
    ]
    assert _warnings(created) == ["299 - " + _quoted(f) for f in fields]
    got = created.json()
    assert got["metadata"]["labels"] == {"a": "1", "b": "2"}
    ((port,),) = [got["spec"]["ports"]]
    assert (port["name"], port["port"], port["protocol"]) == ("a", 81, "UDP")
    assert got["spec"]["type"] == "NodePort"
    refused = _send(kube_api_client, "POST", path, service, "dryRun=All&fieldValidation=Strict")
    assert refused.status == 400, refused.data
    assert refused.json()["message"] == (
        'Service in version "v1" cannot be handled as a Service: strict decoding error: '
        + ", ".join(fields)
    )


def test_a_repeated_field_deep_in_a_list_is_named_by_its_path(
    kube_api_client: Api, namespace: str
) -> None:
    deployment = (
        '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{'
        '"replicas":1,"replicas":2,"selector":{"matchLabels":{"a":"b"}},"template":{'
        '"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"x",'
        '"image":"y","env":[{"name":"A","value":"1","value":"2"}]}]}}}}'
    )
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    refused = _send(kube_api_client, "POST", path, deployment, "fieldValidation=Strict")
    assert refused.status == 400, refused.data
    assert refused.json()["message"] == (
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
        'duplicate field "spec.replicas", '
        'duplicate field "spec.template.spec.containers[0].image", '
        'duplicate field "spec.template.spec.containers[0].env[0].value"'
    )
    created = _send(kube_api_client, "POST", path, deployment, "")
    assert created.status == 201, created.data
    spec = created.json()["spec"]
    assert (spec["replicas"], spec["template"]["spec"]["containers"][0]["image"]) == (2, "y")


def test_a_patch_s_repeated_fields_come_before_the_patched_object_s_unknown_ones(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    cm = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p"},"data":{"a":"1"}}'
    assert _send(kube_api_client, "POST", path, cm, "").status == 201
    # A patch is a map: the last of a repeated field wins.
    patch = '{"spec":[1,2.5,true,"s"],"data":{"x":"1"},"data":{"b":"<&>","n":null}}'
    for ctype in (MERGE, STRATEGIC):
        warned = _send(kube_api_client, "PATCH", f"{path}/p", patch, "", ctype)
        assert warned.status == 200, warned.data
        assert _warnings(warned) == [
            '299 - "duplicate field \\"data\\""',
            '299 - "unknown field \\"spec\\""',
        ]
        assert warned.json()["data"] == {"a": "1", "b": "<&>"}
    why = 'strict decoding error: duplicate field "data", unknown field "spec"'
    # Strict: the 422 of a patch; a strategic one shows the patch as Go prints a map.
    strategic = _send(
        kube_api_client, "PATCH", f"{path}/p", patch, "fieldValidation=Strict", STRATEGIC
    )
    assert strategic.status == 422, strategic.data
    shown = 'Invalid value: "map[data:map[b:<&> n:<nil>] spec:[1 2.5 true s]]": ' + why
    assert strategic.json()["message"] == ' "" is invalid: patch: ' + shown
    assert strategic.json()["details"] == {
        "causes": [{"reason": "FieldValueInvalid", "message": shown, "field": "patch"}]
    }
    # a merge patch shows the patched object
    merge = _send(kube_api_client, "PATCH", f"{path}/p", patch, "fieldValidation=Strict", MERGE)
    assert merge.status == 422, merge.data
    message = merge.json()["message"]
    assert message.startswith(' "" is invalid: patch: Invalid value: "{')
    assert message.endswith('}": ' + why)
    assert '\\"spec\\":[1,2.5,true,\\"s\\"]' in message


def test_a_custom_resource_s_repeated_fields_come_first_then_its_unknown_ones_sorted(
    kube_api_client: Api, memcacheds: str
) -> None:
    group_version = memcacheds.split("/")[2] + "/v1alpha1"
    cr = (
        f'{{"apiVersion":"{group_version}","kind":"Memcached","metadata":{{"name":"NAME",'
        '"labels":{"a":"1"},"labels":{"b":"2"}},"zz":1,"spec":{"size":1,"extra":{"x":1},'
        '"zoo":1,"bogus":1,"extra":{"y":2},"size":2},"aa":1}'
    )
    fields = [
        'duplicate field "metadata.labels"',
        'duplicate field "spec.extra"',
        'duplicate field "spec.size"',
        'unknown field "aa"',
        'unknown field "spec.bogus"',
        'unknown field "spec.zoo"',
        'unknown field "zz"',
    ]
    ignored = _send(
        kube_api_client, "POST", memcacheds, cr.replace("NAME", "i"), "fieldValidation=Ignore"
    )
    assert (ignored.status, _warnings(ignored)) == (201, []), ignored.data
    # Unstructured: the last of a repeated field wins, maps included.
    got = ignored.json()
    assert (got["metadata"]["labels"], got["spec"]) == (
        {"b": "2"},
        {"extra": {"y": 2}, "image": "memcached:1.6", "size": 2},
    )
    warned = _send(kube_api_client, "POST", memcacheds, cr.replace("NAME", "w"), "")
    assert warned.status == 201, warned.data
    assert _warnings(warned) == ["299 - " + _quoted(f) for f in fields]
    refused = _send(
        kube_api_client, "POST", memcacheds, cr.replace("NAME", "s"), "fieldValidation=Strict"
    )
    assert refused.status == 400, refused.data
    assert refused.json()["message"] == (
        'Memcached in version "v1alpha1" cannot be handled as a Memcached: strict decoding '
        "error: " + ", ".join(fields)
    )


def _quoted(text: str) -> str:
    """A Warning header's text: quoted, its own quotes escaped."""
    return '"' + text.replace('"', '\\"') + '"'


def test_a_custom_resource_s_patch_refused_under_strict_shows_the_patched_object_sorted(
    kube_api_client: Api, memcacheds: str
) -> None:
    group_version = memcacheds.split("/")[2] + "/v1alpha1"
    cr = f'{{"apiVersion":"{group_version}","kind":"Memcached","metadata":{{"name":"m"}},"spec":{{"size":2}}}}'
    assert _send(kube_api_client, "POST", memcacheds, cr, "").status == 201
    stored = raw(kube_api_client, "GET", f"{memcacheds}/m").json()
    for ctype, patch, size, why in (
        (MERGE, '{"spec":{"bogus":1,"size":3,"size":4}}', 4,
         'duplicate field "spec.size", unknown field "spec.bogus"'),
        ("application/json-patch+json", '[{"op":"add","path":"/spec/bogus","value":1}]', 2,
         'unknown field "spec.bogus"'),
    ):  # fmt: skip
        resp = _send(
            kube_api_client, "PATCH", f"{memcacheds}/m", patch, "fieldValidation=Strict", ctype
        )
        assert resp.status == 422, resp.data
        # an unstructured object, marshalled as Go marshals a map: every key sorted
        patched = {**stored, "spec": {**stored["spec"], "bogus": 1, "size": size}}
        shown = json.dumps(json.dumps(patched, sort_keys=True, separators=(",", ":")))
        assert resp.json()["message"] == (
            f' "" is invalid: patch: Invalid value: {shown}: strict decoding error: {why}'
        )


def test_a_yaml_body_s_repeated_keys_are_go_yaml_s_by_line_before_the_unknown_fields(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    body = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yc\n  labels:\n    x: '1'\n"
        "    x: '2'\nbogus: 1\ndata:\n  a: '1'\ndata:\n  b: '2'\n"
    )
    yaml_type = "application/yaml"
    created = _send(kube_api_client, "POST", path, body, "", yaml_type)
    assert created.status == 201, created.data
    assert _warnings(created) == [  # the line of the repeated key's value
        '299 - "line 7: key \\"x\\" already set in map"',
        '299 - "line 12: key \\"data\\" already set in map"',
        '299 - "unknown field \\"bogus\\""',
    ]
    got = created.json()  # YAML keeps the last: no merging
    assert (got["data"], got["metadata"]["labels"]) == ({"b": "2"}, {"x": "2"})
    refused = _send(kube_api_client, "PUT", f"{path}/yc", body, "fieldValidation=Strict", yaml_type)
    assert refused.status == 400, refused.data
    assert refused.json()["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'yaml: unmarshal errors:\n  line 7: key "x" already set in map\n  line 12: key "data" '
        'already set in map, unknown field "bogus"'
    )
    ignored = _send(kube_api_client, "PUT", f"{path}/yc", body, "fieldValidation=Ignore", yaml_type)
    assert (ignored.status, _warnings(ignored)) == (200, []), ignored.data


def test_an_apply_s_repeated_keys_are_checked_once_it_is_made(
    kube_api_client: Api, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps/a?fieldManager=m"
    apply = "application/apply-patch+yaml"
    body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: '1'\n  k: '2'\n"
    warned = raw(kube_api_client, "PATCH", path, body=body.encode(), content_type=apply)
    assert warned.status == 201, warned.data
    assert _warnings(warned) == ['299 - "line 7: key \\"k\\" already set in map"']
    assert warned.json()["data"] == {"k": "2"}
    # JSON is YAML to an apply: its keys are on line 1.
    as_json = (
        '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"3"},"data":{}}'
    )
    strict = raw(
        kube_api_client, "PATCH", path + "&fieldValidation=Strict", body=as_json.encode(),
        content_type=apply,
    )  # fmt: skip
    assert (strict.status, strict.json()["message"]) == (400, (
        "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n"
        '  line 1: key "data" already set in map'
    ))  # fmt: skip
    # A field the kind does not have fails the apply first: structured-merge-diff's 500.
    unknown = body.replace("\ndata:", "\nbogus: 1\ndata:")
    failed = raw(kube_api_client, "PATCH", path, body=unknown.encode(), content_type=apply)
    assert (failed.status, failed.json()["message"]) == (500, (
        "failed to create typed patch object (/a; /v1, Kind=ConfigMap): .bogus: field not "
        "declared in schema"
    ))  # fmt: skip
    assert _warnings(failed) == []
