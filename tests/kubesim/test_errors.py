"""Errors are Status objects with kube-apiserver's code, reason and message."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest
from kubernetes import client

from tests.kubesim.support import raw

Api = client.ApiClient


def _cms(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/configmaps"


def _status(resp: Any, code: int, reason: str) -> dict[str, Any]:
    assert resp.status == code, resp.data
    body = resp.json()
    assert body["kind"] == "Status" and body["status"] == "Failure"
    assert body["code"] == code and body["reason"] == reason
    return body


UNRECOGNIZED = "the object provided is unrecognized (must be of type ConfigMap): "


def test_malformed_json_is_400_in_the_go_decoders_words(
    kube_api_client: Api, namespace: str
) -> None:
    cases = {
        b'{"metadata": {': "unexpected end of JSON input",
        b"{bad": "invalid character 'b' looking for beginning of object key string",
        b'{"a" 1}': "invalid character '1' after object key",
        b'{"a": 1 "b": 2}': "invalid character '\"' after object key:value pair",
        b'{"a": [1 2]}': "invalid character '2' after array element",
        b'{"a": tru}': "invalid character '}' in literal true (expecting 'e')",
        b'{"a": -x}': "invalid character 'x' in numeric literal",
        b"{} {}": "invalid character '{' after top-level value",
    }
    for sent, go_error in cases.items():
        resp = raw(kube_api_client, "POST", _cms(namespace), body=sent)
        assert _status(resp, 400, "BadRequest")["message"] == (
            f"{UNRECOGNIZED}couldn't get version/kind; json parse error: {go_error} "
            f"({sent.decode()})"
        )


def test_a_body_that_is_not_an_object_is_400(kube_api_client: Api, namespace: str) -> None:
    resp = raw(kube_api_client, "POST", _cms(namespace), body=b"[1]")
    assert _status(resp, 400, "BadRequest")["message"] == (
        f"{UNRECOGNIZED}couldn't get version/kind; json parse error: json: cannot unmarshal "
        'array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty'
        '\\""; Kind string "json:\\"kind,omitempty\\"" } (5b315d)'
    )
    resp = raw(kube_api_client, "POST", _cms(namespace), body=b"")
    assert _status(resp, 400, "BadRequest")["message"] == (
        f"{UNRECOGNIZED}couldn't get version/kind; json parse error: unexpected end of JSON "
        "input (<empty>)"
    )


def test_long_bodies_are_summarised_in_the_error(kube_api_client: Api, namespace: str) -> None:
    sent = b'{"metadata": {"name": "abcdefghijklmnopqrstuvwxyz"'
    resp = raw(kube_api_client, "POST", _cms(namespace), body=sent)
    assert _status(resp, 400, "BadRequest")["message"].endswith(
        '({"metadata": {"name": "abcdefg ...)'
    )


def test_malformed_yaml_is_400(kube_api_client: Api, namespace: str) -> None:
    resp = raw(
        kube_api_client,
        "POST",
        _cms(namespace),
        body=b"metadata: [unclosed",
        content_type="application/yaml",
    )
    assert _status(resp, 400, "BadRequest")["message"] == (
        f"{UNRECOGNIZED}yaml: line 1: did not find expected ',' or ']' "
        "(6d657461646174613a205b756e636c6f736564)"
    )


def test_malformed_patches_are_400(kube_api_client: Api, namespace: str) -> None:
    client.CoreV1Api(kube_api_client).create_namespaced_config_map(
        namespace, {"metadata": {"name": "p"}}
    )
    go_error = "invalid character 'b' looking for beginning of object key string"
    for content_type, message in (
        ("application/merge-patch+json", f"error decoding patch: {go_error}"),
        ("application/json-patch+json", f"error decoding patch: {go_error}"),
        ("application/strategic-merge-patch+json", go_error),
    ):
        resp = raw(
            kube_api_client,
            "PATCH",
            f"{_cms(namespace)}/p",
            body=b"{bad",
            content_type=content_type,
        )
        assert _status(resp, 400, "BadRequest")["message"] == message


def test_a_write_that_leaves_the_object_no_name_is_400(
    kube_api_client: Api, namespace: str
) -> None:
    client.CoreV1Api(kube_api_client).create_namespaced_config_map(
        namespace, {"metadata": {"name": "anon"}, "data": {"k": "v"}}
    )
    path = f"{_cms(namespace)}/anon"
    smp, merge = "application/strategic-merge-patch+json", "application/merge-patch+json"
    for sent, content_type in (
        # a top-level `$patch` applies to the whole object, its metadata too
        ({"$patch": "delete"}, smp),
        ({"$patch": "replace", "data": {"a": "b"}}, smp),
        ({"metadata": {"name": None}}, merge),
        ([{"op": "remove", "path": "/metadata/name"}], "application/json-patch+json"),
    ):
        resp = raw(kube_api_client, "PATCH", path, body=sent, content_type=content_type)
        assert _status(resp, 400, "BadRequest")["message"] == (
            "the name of the object (anon based on URL) was undeterminable: name must be provided"
        ), sent
    resp = raw(kube_api_client, "PUT", path, body={"metadata": {}, "data": {"x": "y"}})
    assert _status(resp, 400, "BadRequest")["message"] == (
        "the name of the object (anon based on URL) was undeterminable: name must be provided"
    )
    # the namespace is checked before the name
    resp = raw(kube_api_client, "PUT", path, body={"metadata": {"namespace": "elsewhere"}})
    assert _status(resp, 400, "BadRequest")["message"] == (
        "the namespace of the provided object does not match the namespace sent on the request"
    )
    # a replace that keeps the name is an ordinary write
    sent = {"$patch": "replace", "metadata": {"name": "anon"}, "data": {"a": "b"}}
    resp = raw(kube_api_client, "PATCH", path, body=sent, content_type=smp)
    assert resp.status == 200, resp.data
    assert resp.json()["data"] == {"a": "b"}
    scale = _deployment(kube_api_client, namespace, "anon") + "/scale"
    resp = raw(
        kube_api_client, "PATCH", scale, body={"metadata": {"name": None}}, content_type=merge
    )
    assert _status(resp, 400, "BadRequest")["message"] == (
        "the name of the object (anon based on URL) was undeterminable: name must be provided"
    )


def test_yaml_bodies_are_accepted(kube_api_client: Api, namespace: str) -> None:
    resp = raw(
        kube_api_client,
        "POST",
        _cms(namespace),
        body=b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\n",
        content_type="application/yaml",
    )
    assert resp.status == 201


def test_unknown_path_is_404(kube_api_client: Api) -> None:
    for path in ("/nothing/here", "/apis/nope.example.com/v1", "/apis/nope.example.com"):
        resp = raw(kube_api_client, "GET", path)
        assert (resp.status, resp.data) == (404, b"404 page not found\n"), path
    for path in ("/apis/apps/v9", "/apis/apps/v1/nothings", "/api/v1/nothings"):
        body = _status(raw(kube_api_client, "GET", path), 404, "NotFound")
        assert body["message"] == "the server could not find the requested resource"


def test_wrong_method_is_405(kube_api_client: Api, namespace: str) -> None:
    resp = raw(kube_api_client, "POST", f"{_cms(namespace)}/named", body={"metadata": {}})
    _status(resp, 405, "MethodNotAllowed")
    resp = raw(kube_api_client, "DELETE", "/api/v1/namespaces")
    _status(resp, 405, "MethodNotAllowed")


def test_body_over_3_mib_is_413(kube_api_client: Api, namespace: str) -> None:
    big = {"metadata": {"name": "big"}, "data": {"k": "x" * (3 * 1024 * 1024 + 10)}}
    resp = raw(kube_api_client, "POST", _cms(namespace), body=big)
    body = _status(resp, 413, "RequestEntityTooLarge")
    assert body["message"] == "Request entity too large: limit is 3145728"


@pytest.mark.kubesim_only  # the real server answers a kind it has no protobuf for differently
def test_unsupported_content_types_are_415(kube_api_client: Api, namespace: str) -> None:
    version, kind = b"example.com/v1", b"Widget"  # a kind no .proto defines
    type_meta = b"\x0a" + bytes([len(version)]) + version + b"\x12" + bytes([len(kind)]) + kind
    envelope = b"k8s\x00\x0a" + bytes([len(type_meta)]) + type_meta + b"\x12\x00"
    resp = raw(
        kube_api_client,
        "POST",
        f"/api/v1/namespaces/{namespace}/configmaps",
        body=envelope,
        content_type="application/vnd.kubernetes.protobuf",
    )
    _status(resp, 415, "UnsupportedMediaType")
    client.CoreV1Api(kube_api_client).create_namespaced_config_map(
        namespace, {"metadata": {"name": "p"}}
    )
    resp = raw(
        kube_api_client,
        "PATCH",
        f"{_cms(namespace)}/p",
        body={"data": {}},
        content_type="text/plain",
    )
    body = _status(resp, 415, "UnsupportedMediaType")
    assert "application/merge-patch+json" in body["message"]


def test_invalid_name_is_422(kube_api_client: Api, namespace: str) -> None:
    resp = raw(kube_api_client, "POST", _cms(namespace), body={"metadata": {"name": "Bad_Name"}})
    body = _status(resp, 422, "Invalid")
    assert body["message"].startswith(
        'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid '
        'value: "Bad_Name": a lowercase RFC 1123 subdomain'
    )
    assert body["details"]["causes"][0]["field"] == "metadata.name"


def test_invalid_deployment_is_422(kube_api_client: Api, namespace: str) -> None:
    dep = {
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"app": "a"}},
            "template": {
                "metadata": {"labels": {"app": "b"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    resp = raw(
        kube_api_client, "POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", body=dep
    )
    body = _status(resp, 422, "Invalid")
    assert body["message"] == (
        'Deployment.apps "d" is invalid: spec.template.metadata.labels: Invalid value: '
        'map[string]string{"app":"b"}: `selector` does not match template `labels`'
    )


def test_mismatched_name_is_400(kube_api_client: Api, namespace: str) -> None:
    client.CoreV1Api(kube_api_client).create_namespaced_config_map(
        namespace, {"metadata": {"name": "one"}}
    )
    resp = raw(kube_api_client, "PUT", f"{_cms(namespace)}/one", body={"metadata": {"name": "two"}})
    assert _status(resp, 400, "BadRequest")["message"] == (
        "the name of the object (two) does not match the name on the URL (one)"
    )


def test_rejected_requests_change_nothing(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "keep"}, "data": {"k": "v"}})
    before = core.list_namespaced_config_map(namespace)
    raw(kube_api_client, "POST", _cms(namespace), body=b"{bad")
    raw(kube_api_client, "POST", _cms(namespace), body={"metadata": {"name": "Bad_Name"}})
    raw(
        kube_api_client,
        "PUT",
        f"{_cms(namespace)}/keep",
        body={"metadata": {"name": "keep", "resourceVersion": "1"}, "data": {}},
    )
    raw(
        kube_api_client,
        "PATCH",
        f"{_cms(namespace)}/keep",
        body=[{"op": "test", "path": "/data/k", "value": "no"}],
        content_type="application/json-patch+json",
    )
    after = core.list_namespaced_config_map(namespace)
    assert [(i.metadata.name, i.metadata.resource_version, i.data) for i in after.items] == [
        (i.metadata.name, i.metadata.resource_version, i.data) for i in before.items
    ]


@pytest.mark.kubesim_only
def test_too_many_requests_carries_retry_after(
    kube_api_client: Api, namespace: str, kubesim_server: Any
) -> None:
    kubesim_server.add_error(429, verb="list", resource="configmaps", count=1, retry_after=3)
    resp = raw(kube_api_client, "GET", _cms(namespace))
    body = _status(resp, 429, "TooManyRequests")
    assert resp.headers["Retry-After"] == "3"
    assert body["details"]["retryAfterSeconds"] == 3
    assert raw(kube_api_client, "GET", _cms(namespace)).status == 200


@pytest.mark.kubesim_only
def test_internal_error_is_500(kube_api_client: Api, namespace: str, kubesim_server: Any) -> None:
    kubesim_server.add_error(500, verb="get", resource="configmaps", count=1)
    resp = raw(kube_api_client, "GET", f"{_cms(namespace)}/whatever")
    _status(resp, 500, "InternalError")


def test_invalid_labels_are_422(kube_api_client: Api, namespace: str) -> None:
    body = {"metadata": {"name": "l", "labels": {"ok": "bad value!", "bad key!": "v"}}}
    resp = raw(kube_api_client, "POST", _cms(namespace), body=body)
    causes = _status(resp, 422, "Invalid")["details"]["causes"]
    assert {c["field"] for c in causes} == {"metadata.labels"}
    messages = sorted(c["message"] for c in causes)  # Go walks the map in random order
    assert messages[0].startswith('Invalid value: "bad key!": name part must consist')
    assert messages[1].startswith('Invalid value: "bad value!": a valid label must be')
    assert len(messages) == 2


def test_unknown_fields_of_built_in_kinds(kube_api_client: Api, namespace: str) -> None:
    body = {"metadata": {"name": "uf"}, "data": {"a": "1"}, "bogus": 1}
    strict = raw(kube_api_client, "POST", f"{_cms(namespace)}?fieldValidation=Strict", body=body)
    assert _status(strict, 400, "BadRequest")["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'unknown field "bogus"'
    )
    warned = raw(kube_api_client, "POST", _cms(namespace), body=body)
    assert warned.status == 201
    assert warned.headers["Warning"] == '299 - "unknown field \\"bogus\\""'
    assert "bogus" not in warned.json()


def test_wrong_json_types_are_400(kube_api_client: Api, namespace: str) -> None:
    dep = {
        "metadata": {"name": "t"},
        "spec": {
            "replicas": "three",
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    resp = raw(
        kube_api_client, "POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", body=dep
    )
    assert _status(resp, 400, "BadRequest")["message"] == (
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal '
        "string into Go struct field DeploymentSpec.spec.replicas of type int32"
    )


def _deployment(kube_api_client: Api, namespace: str, name: str) -> str:
    dep = {
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    client.AppsV1Api(kube_api_client).create_namespaced_deployment(namespace, dep)
    return f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}"


def test_wrong_json_types_in_a_patch_are_422(kube_api_client: Api, namespace: str) -> None:
    path = _deployment(kube_api_client, namespace, "pt")
    # merge and JSON patches: the patched JSON is decoded, and shown whole in the message
    go_error = (
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of "
        "type int32"
    )
    for content_type, body in (
        ("application/merge-patch+json", {"spec": {"replicas": "three"}}),
        (
            "application/json-patch+json",
            [{"op": "replace", "path": "/spec/replicas", "value": "three"}],
        ),
    ):
        resp = raw(kube_api_client, "PATCH", path, body=body, content_type=content_type)
        body = _status(resp, 422, "Invalid")
        assert body["message"].startswith(' "" is invalid: patch: Invalid value: "{\\"')
        assert body["message"].endswith(f'}}": {go_error}')
        assert '\\"replicas\\":\\"three\\"' in body["message"]
        assert [c["field"] for c in body["details"]["causes"]] == ["patch"]
    # a strategic merge patch: the merged map is converted, and the patch shown
    for sent, why in (
        (
            {"spec": {"replicas": "three"}},
            'map[spec:map[replicas:three]]": unrecognized type: int32',
        ),
        ({"spec": {"paused": 1}}, 'map[spec:map[paused:1]]": unrecognized type: bool'),
        (
            {"metadata": {"labels": {"x": 1}}},
            'map[metadata:map[labels:map[x:1]]]": cannot convert int64 to string',
        ),
        (
            {"spec": {"selector": "x"}},
            'map[spec:map[selector:x]]": cannot restore struct from: string',
        ),
    ):
        resp = raw(
            kube_api_client,
            "PATCH",
            path,
            body=sent,
            content_type="application/strategic-merge-patch+json",
        )
        body = _status(resp, 422, "Invalid")
        assert body["message"] == f' "" is invalid: patch: Invalid value: "{why}'
        assert body["details"] == {
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": f'Invalid value: "{why}',
                    "field": "patch",
                }
            ]
        }


def _unconverted(resp: Any, message: str) -> None:
    """A plain Go error kube-apiserver passed on: 500, no reason, no details."""
    assert resp.status == 500, resp.data
    assert resp.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "code": 500,
    }


def test_a_strategic_list_item_without_its_merge_key_is_500(
    kube_api_client: Api, namespace: str
) -> None:
    path = _deployment(kube_api_client, namespace, "mk")
    for item in ({"image": "busybox"}, {"image": "busybox", "$patch": "delete"}):
        resp = raw(
            kube_api_client,
            "PATCH",
            path,
            body={"spec": {"template": {"spec": {"containers": [item]}}}},
            content_type="application/strategic-merge-patch+json",
        )
        shown = " ".join(f"{k}:{v}" for k, v in sorted(item.items()))
        _unconverted(resp, f"map: map[{shown}] does not contain declared merge key: name")


def test_an_unknown_patch_directive_is_500(kube_api_client: Api, namespace: str) -> None:
    client.CoreV1Api(kube_api_client).create_namespaced_config_map(
        namespace, {"metadata": {"name": "frob"}, "data": {"k": "v"}}
    )
    resp = raw(
        kube_api_client,
        "PATCH",
        f"{_cms(namespace)}/frob",
        body={"data": {"$patch": "frob"}},
        content_type="application/strategic-merge-patch+json",
    )
    _unconverted(resp, "unknown patch type: frob in map: map[$patch:frob]")
    path = _deployment(kube_api_client, namespace, "frob")
    resp = raw(
        kube_api_client,
        "PATCH",
        path,
        body={"spec": {"template": {"spec": {"containers": [{"name": "c", "$patch": "frob"}]}}}},
        content_type="application/strategic-merge-patch+json",
    )
    _unconverted(resp, "unknown patch type: frob in map: map[$patch:frob name:c]")


def test_a_json_patch_that_does_not_apply_is_one_generic_422(
    kube_api_client: Api, namespace: str
) -> None:
    client.CoreV1Api(kube_api_client).create_namespaced_config_map(
        namespace, {"metadata": {"name": "jp"}, "data": {"k": "v"}}
    )
    for op in (
        {"op": "test", "path": "/data/k", "value": "no"},
        {"op": "test", "path": "/data/missing", "value": "no"},
        {"op": "remove", "path": "/data/missing"},
        {"op": "add", "path": "/nope/missing", "value": "x"},
        {"op": "replace", "path": "/nope/missing", "value": "x"},
        {"op": "move", "from": "/data/missing", "path": "/data/x"},
        {"op": "remove", "path": "/metadata/finalizers/5"},
        {"op": "frob", "path": "/data/k"},
        {"op": "add"},
    ):
        resp = raw(
            kube_api_client,
            "PATCH",
            f"{_cms(namespace)}/jp",
            body=[op],
            content_type="application/json-patch+json",
        )
        body = _status(resp, 422, "Invalid")
        assert body["message"] == "the server rejected our request due to an error in our request"
        assert body["details"] == {}, op
    for sent, what in (
        ({"op": "add"}, "object into Go value of type []"),
        ([1], "number into Go value of type "),
    ):
        resp = raw(
            kube_api_client,
            "PATCH",
            f"{_cms(namespace)}/jp",
            body=sent,
            content_type="application/json-patch+json",
        )
        assert _status(resp, 400, "BadRequest")["message"] == (
            f"error decoding patch: json: cannot unmarshal {what}handlers.jsonPatchOp"
        )


def test_a_json_patch_reads_a_missing_key_as_null(kube_api_client: Api, namespace: str) -> None:
    core = client.CoreV1Api(kube_api_client)
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "jn"}, "data": {"k": "v"}})
    ops = [
        {"op": "test", "path": "/data/missing", "value": None},
        {"op": "replace", "path": "/data/new", "value": "n"},  # json-patch v4 adds it
    ]
    resp = raw(
        kube_api_client,
        "PATCH",
        f"{_cms(namespace)}/jn",
        body=ops,
        content_type="application/json-patch+json",
    )
    assert resp.status == 200, resp.data
    assert core.read_namespaced_config_map("jn", namespace).data == {"k": "v", "new": "n"}


def test_a_resource_version_that_is_not_a_number_is_500(
    kube_api_client: Api, namespace: str
) -> None:
    core = client.CoreV1Api(kube_api_client)
    cm = core.create_namespaced_config_map(namespace, {"metadata": {"name": "rv"}})
    body = client.ApiClient().sanitize_for_serialization(cm)
    for version in ("abc", "-1", "1e3"):
        body["metadata"]["resourceVersion"] = version
        resp = raw(kube_api_client, "PUT", f"{_cms(namespace)}/rv", body=body)
        _unconverted(resp, f'strconv.ParseUint: parsing "{version}": invalid syntax')
    for content_type in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
        resp = raw(
            kube_api_client,
            "PATCH",
            f"{_cms(namespace)}/rv",
            body={"metadata": {"resourceVersion": "abc"}},
            content_type=content_type,
        )
        _unconverted(resp, 'strconv.ParseUint: parsing "abc": invalid syntax')
    body["metadata"]["resourceVersion"] = "99999999999"  # a number: only stale
    _status(raw(kube_api_client, "PUT", f"{_cms(namespace)}/rv", body=body), 409, "Conflict")


def test_label_selector_syntax_errors_are_400_in_the_parsers_words(
    kube_api_client: Api, namespace: str
) -> None:
    requirement = "unable to parse requirement: "
    cases = {
        "a in (b": f"{requirement}found '', expected: ',' or ')'",
        "a in (b,": f"{requirement}found '', expected: ',', or identifier",
        "a in ((": f"{requirement}found '(', expected: ',', ')' or identifier",
        "a in (b c)": f"{requirement}found 'c', expected: ',' or ')'",
        "a in b": f"{requirement}found 'b' expected: '('",
        "a in": f"{requirement}found '' expected: '('",
        "a=(": f"{requirement}found '(', expected: identifier",
        "!": f"{requirement}found '', expected: identifier",
        "!!a": f"{requirement}found '!', expected: identifier",
        "a b": f"{requirement}found 'b', expected: in, notin, =, ==, !=, gt, lt",
        "a>x": f"{requirement}values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the "
        "value must be an integer",
        "/a": f'{requirement}<nil>: Invalid value: "/a": prefix part must be non-empty',
        "a=b=c": "found '=', expected: ',' or 'end of string'",
        "a=b c": "found 'c', expected: ',' or 'end of string'",
        "=b": "found '=', expected: !, identifier, or 'end of string'",
        ",": "found ',', expected: !, identifier, or 'end of string'",
        "a,": "found '', expected: identifier after ','",
        "a,,b": "found ',', expected: identifier after ','",
    }
    for selector, message in cases.items():
        resp = raw(
            kube_api_client,
            "GET",
            f"/api/v1/namespaces/{namespace}/pods?{urlencode({'labelSelector': selector})}",
        )
        assert _status(resp, 400, "BadRequest")["message"] == message, selector
    resp = raw(kube_api_client, "GET", f"{_cms(namespace)}?labelSelector=a%3Db%40d")
    assert _status(resp, 400, "BadRequest")["message"].startswith(
        f'{requirement}values[0][a]: Invalid value: "b@d": a valid label must be an empty string'
    )
    for fine in ("a in (,)", "a==", "a notin (b,,c)", "!a,b"):
        resp = raw(
            kube_api_client, "GET", f"{_cms(namespace)}?{urlencode({'labelSelector': fine})}"
        )
        assert resp.status == 200, (fine, resp.data)
