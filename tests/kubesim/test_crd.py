"""CustomResourceDefinitions: serving, validation, pruning, defaulting and subresources."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from tests.kubesim.support import established_crd, memcached_crd, raw, wait_for

Api = client.ApiClient


@pytest.fixture
def crd(kube_api_client: Api) -> Iterator[dict[str, Any]]:
    """A Memcached CRD in a group of its own, established; deleted afterwards."""
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    with established_crd(kube_api_client, memcached_crd(group=group)) as body:
        yield body


def _cr(crd: dict[str, Any], name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{crd['spec']['group']}/v1alpha1",
        "kind": "Memcached",
        "metadata": {"name": name},
        "spec": spec,
    }


def _objects(api: Api) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api)


def _create(api: Api, crd: dict[str, Any], namespace: str, name: str, **spec: Any) -> dict:
    return _objects(api).create_namespaced_custom_object(
        crd["spec"]["group"], "v1alpha1", namespace, "memcacheds", _cr(crd, name, **spec)
    )


def _invalid(api: Api, crd: dict[str, Any], namespace: str, **spec: Any) -> dict[str, Any]:
    with pytest.raises(client.ApiException) as exc:
        _create(api, crd, namespace, "bad", **spec)
    assert exc.value.status == 422
    return json.loads(exc.value.body)


def test_creating_a_crd_serves_it_in_discovery(kube_api_client: Api, crd: dict) -> None:
    group = crd["spec"]["group"]

    def served() -> Any:
        # A real API server's discovery may follow Established by a moment (kubectl retries).
        response = raw(kube_api_client, "GET", f"/apis/{group}/v1alpha1")
        return response.json() if response.status == 200 else None

    resources = wait_for(served, what="the group version in discovery")
    by_name = {r["name"]: r for r in resources["resources"]}
    assert by_name["memcacheds"]["kind"] == "Memcached"
    assert by_name["memcacheds"]["namespaced"] is True
    assert by_name["memcacheds"]["shortNames"] == ["mc"]
    assert by_name["memcacheds/status"]["verbs"] == ["get", "patch", "update"]
    assert by_name["memcacheds/scale"]["kind"] == "Scale"
    groups = raw(kube_api_client, "GET", "/apis").json()["groups"]
    assert group in [g["name"] for g in groups]


def test_invalid_value_is_422_with_kube_wording(
    kube_api_client: Api, crd: dict, namespace: str
) -> None:
    body = _invalid(kube_api_client, crd, namespace, size=-1)
    group = crd["spec"]["group"]
    assert body["reason"] == "Invalid"
    # the schema's cause, then the scale subresource's check of its replicas path
    assert body["message"] == (
        f'Memcached.{group} "bad" is invalid: [spec.size: Invalid value: -1: spec.size in body '
        "should be greater than or equal to 0, .spec.size: Invalid value: -1: should be a "
        "non-negative integer]"
    )
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "field": "spec.size",
            "message": "Invalid value: -1: spec.size in body should be greater than or equal to 0",
        },
        {
            "reason": "FieldValueInvalid",
            "field": ".spec.size",
            "message": "Invalid value: -1: should be a non-negative integer",
        },
    ]


def test_replicas_path_of_the_wrong_type(kube_api_client: Api, crd: dict, namespace: str) -> None:
    causes = _invalid(kube_api_client, crd, namespace, size="three")["details"]["causes"]
    assert causes[1] == {
        "reason": "FieldValueInvalid",
        "field": ".spec.size",
        "message": "Invalid value: 0: .spec.size accessor error: three is of the type string, "
        "expected int64",
    }
    assert len(causes) == 2


def test_one_cause_per_bad_field(kube_api_client: Api, crd: dict, namespace: str) -> None:
    body = _invalid(
        kube_api_client, crd, namespace, size=11, mode="slow", label="ABC", ratio=0, image=""
    )
    causes = {c["field"]: c for c in body["details"]["causes"]}
    assert causes["spec.size"]["message"].endswith("should be less than or equal to 10")
    assert causes["spec.mode"]["reason"] == "FieldValueNotSupported"
    assert causes["spec.mode"]["message"] == (
        'Unsupported value: "slow": supported values: "fast", "safe"'
    )
    assert causes["spec.label"]["message"].endswith("spec.label in body should match '^[a-z]+$'")
    assert causes["spec.ratio"]["message"].endswith("spec.ratio in body should be greater than 0")
    assert causes["spec.image"]["message"].endswith("should be at least 1 chars long")
    assert len(causes) == 5


def test_too_long_strings_name_the_limit_not_the_value(
    kube_api_client: Api, crd: dict, namespace: str
) -> None:
    body = _invalid(kube_api_client, crd, namespace, size=1, label="abcdefghijk")
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueTooLong",
            "field": "spec.label",
            "message": "Too long: may not be longer than 8",
        }
    ]


def test_required_and_type_errors(kube_api_client: Api, crd: dict, namespace: str) -> None:
    body = _invalid(kube_api_client, crd, namespace, image=5)
    causes = {c["field"]: c for c in body["details"]["causes"]}
    assert causes["spec.size"] == {
        "reason": "FieldValueRequired",
        "message": "Required value",
        "field": "spec.size",
    }
    assert causes["spec.image"]["reason"] == "FieldValueTypeInvalid"
    assert causes["spec.image"]["message"] == (
        'Invalid value: "integer": spec.image in body must be of type string: "integer"'
    )


def test_int_or_string_nullable_and_preserved_fields(
    kube_api_client: Api, crd: dict, namespace: str
) -> None:
    obj = _create(
        kube_api_client,
        crd,
        namespace,
        "ok",
        size=1,
        port="http",
        note=None,
        extra={"anything": {"goes": [1, 2]}},
    )
    assert obj["spec"]["port"] == "http"
    assert obj["spec"]["extra"] == {"anything": {"goes": [1, 2]}}
    obj = _create(kube_api_client, crd, namespace, "ok2", size=1, port=8080)
    assert obj["spec"]["port"] == 8080


def test_unknown_fields_are_pruned_and_defaults_applied(
    kube_api_client: Api, crd: dict, namespace: str
) -> None:
    obj = _create(kube_api_client, crd, namespace, "p", size=2, unknown="x")
    assert obj["spec"] == {"size": 2, "image": "memcached:1.6"}


def test_strict_field_validation_rejects_unknown_fields(
    kube_api_client: Api, crd: dict, namespace: str
) -> None:
    group = crd["spec"]["group"]
    resp = raw(
        kube_api_client,
        "POST",
        f"/apis/{group}/v1alpha1/namespaces/{namespace}/memcacheds?fieldValidation=Strict",
        body=_cr(crd, "s", size=1, unknown="x"),
    )
    assert resp.status == 400
    assert 'strict decoding error: unknown field "spec.unknown"' in resp.json()["message"]


def test_status_subresource(kube_api_client: Api, crd: dict, namespace: str) -> None:
    group, objs = crd["spec"]["group"], _objects(kube_api_client)
    created = _create(kube_api_client, crd, namespace, "st", size=1)
    assert "status" not in created
    objs.patch_namespaced_custom_object_status(
        group,
        "v1alpha1",
        namespace,
        "memcacheds",
        "st",
        {"status": {"nodes": ["a"]}, "spec": {"size": 5}},
    )
    got = objs.get_namespaced_custom_object(group, "v1alpha1", namespace, "memcacheds", "st")
    assert got["status"] == {"nodes": ["a"]}
    assert got["spec"]["size"] == 1
    assert got["metadata"]["generation"] == 1
    objs.patch_namespaced_custom_object(
        group,
        "v1alpha1",
        namespace,
        "memcacheds",
        "st",
        {"spec": {"size": 2}, "status": {"nodes": ["zzz"]}},
    )
    got = objs.get_namespaced_custom_object(group, "v1alpha1", namespace, "memcacheds", "st")
    assert got["metadata"]["generation"] == 2
    assert got["status"] == {"nodes": ["a"]}


def test_scale_subresource_reads_and_writes_the_paths(
    kube_api_client: Api, crd: dict, namespace: str
) -> None:
    group, objs = crd["spec"]["group"], _objects(kube_api_client)
    _create(kube_api_client, crd, namespace, "sc", size=2)
    objs.patch_namespaced_custom_object_status(
        group,
        "v1alpha1",
        namespace,
        "memcacheds",
        "sc",
        {"status": {"replicas": 2, "selector": "app=sc"}},
    )
    scale = objs.get_namespaced_custom_object_scale(
        group, "v1alpha1", namespace, "memcacheds", "sc"
    )
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 2}
    assert scale["status"] == {"replicas": 2, "selector": "app=sc"}
    objs.patch_namespaced_custom_object_scale(
        group, "v1alpha1", namespace, "memcacheds", "sc", {"spec": {"replicas": 4}}
    )
    got = objs.get_namespaced_custom_object(group, "v1alpha1", namespace, "memcacheds", "sc")
    assert got["spec"]["size"] == 4
    with pytest.raises(client.ApiException) as exc:
        objs.patch_namespaced_custom_object_scale(
            group, "v1alpha1", namespace, "memcacheds", "sc", {"spec": {"replicas": 50}}
        )
    assert exc.value.status == 422


def test_strategic_merge_patch_is_415_for_custom_resources(
    kube_api_client: Api, crd: dict, namespace: str
) -> None:
    group = crd["spec"]["group"]
    _create(kube_api_client, crd, namespace, "smp", size=1)
    resp = raw(
        kube_api_client,
        "PATCH",
        f"/apis/{group}/v1alpha1/namespaces/{namespace}/memcacheds/smp",
        body={"spec": {"size": 2}},
        content_type="application/strategic-merge-patch+json",
    )
    assert resp.status == 415
    assert resp.json()["reason"] == "UnsupportedMediaType"


def test_printer_columns_in_table_output(kube_api_client: Api, crd: dict, namespace: str) -> None:
    group = crd["spec"]["group"]
    _create(kube_api_client, crd, namespace, "tbl", size=3)
    table = raw(
        kube_api_client,
        "GET",
        f"/apis/{group}/v1alpha1/namespaces/{namespace}/memcacheds",
        accept="application/json;as=Table;v=v1;g=meta.k8s.io",
    ).json()
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Size", "Image", "Age"]
    assert table["rows"][0]["cells"][:3] == ["tbl", 3, "memcached:1.6"]


def test_multiple_versions_are_served(kube_api_client: Api, namespace: str) -> None:
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    body = memcached_crd(group=group)
    v1 = json.loads(json.dumps(body["spec"]["versions"][0]))
    body["spec"]["versions"][0]["storage"] = False
    v1["name"] = "v1"
    body["spec"]["versions"].append(v1)
    ext = client.ApiextensionsV1Api(kube_api_client)
    ext.create_custom_resource_definition(body)
    try:
        objs = _objects(kube_api_client)
        wait_for(lambda: raw(kube_api_client, "GET", f"/apis/{group}/v1").status == 200)
        objs.create_namespaced_custom_object(
            group,
            "v1alpha1",
            namespace,
            "memcacheds",
            {
                "apiVersion": f"{group}/v1alpha1",
                "kind": "Memcached",
                "metadata": {"name": "mv"},
                "spec": {"size": 1},
            },
        )
        as_v1 = objs.get_namespaced_custom_object(group, "v1", namespace, "memcacheds", "mv")
        assert as_v1["apiVersion"] == f"{group}/v1"
        preferred = raw(kube_api_client, "GET", f"/apis/{group}").json()["preferredVersion"]
        assert preferred["version"] == "v1"
    finally:
        ext.delete_custom_resource_definition(body["metadata"]["name"])


def test_deleting_the_crd_deletes_its_objects(kube_api_client: Api, namespace: str) -> None:
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    body = memcached_crd(group=group)
    ext = client.ApiextensionsV1Api(kube_api_client)
    ext.create_custom_resource_definition(body)
    wait_for(lambda: raw(kube_api_client, "GET", f"/apis/{group}/v1alpha1").status == 200)
    _create(kube_api_client, body, namespace, "doomed", size=1)
    ext.delete_custom_resource_definition(body["metadata"]["name"])

    def gone() -> bool:
        try:
            ext.read_custom_resource_definition(body["metadata"]["name"])
        except client.ApiException as exc:
            return exc.status == 404
        return False

    wait_for(gone, what="the CRD to go")
    assert raw(kube_api_client, "GET", f"/apis/{group}/v1alpha1").status == 404
    ext.create_custom_resource_definition(body)
    wait_for(lambda: raw(kube_api_client, "GET", f"/apis/{group}/v1alpha1").status == 200)
    try:
        items = _objects(kube_api_client).list_namespaced_custom_object(
            group, "v1alpha1", namespace, "memcacheds"
        )["items"]
        assert items == []
    finally:
        ext.delete_custom_resource_definition(body["metadata"]["name"])


def test_custom_resources_need_a_resource_version_to_update(
    kube_api_client: Api, crd: dict, namespace: str
) -> None:
    group = crd["spec"]["group"]
    _create(kube_api_client, crd, namespace, "u", size=1)
    with pytest.raises(client.ApiException) as exc:
        _objects(kube_api_client).replace_namespaced_custom_object(
            group, "v1alpha1", namespace, "memcacheds", "u", _cr(crd, "u", size=2)
        )
    assert exc.value.status == 422
    assert json.loads(exc.value.body)["message"] == (
        f'memcacheds.{group} "u" is invalid: metadata.resourceVersion: Invalid value: 0x0: '
        "must be specified for an update"
    )


def test_a_spec_a_tightened_schema_refuses_still_takes_status_writes(
    kube_api_client: Api, crd: dict, namespace: str
) -> None:
    """kube-apiserver validates a status write against the status schema alone
    (apiextensions' statusStrategy): a CR whose spec the CRD now refuses can still be
    reported on by its controller, while any change of its spec is refused until the field
    is fixed in the same write."""
    group, objs = crd["spec"]["group"], _objects(kube_api_client)
    _create(kube_api_client, crd, namespace, "old", size=1, label="abcdefgh")
    client.ApiextensionsV1Api(kube_api_client).patch_custom_resource_definition(
        crd["metadata"]["name"],
        [{"op": "replace", "value": 4,
          "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/label/"
                  "maxLength"}],
    )  # fmt: skip
    args = (group, "v1alpha1", namespace, "memcacheds", "old")

    def spec_refused() -> dict[str, Any] | None:
        try:
            objs.patch_namespaced_custom_object(*args, {"spec": {"size": 2}}, dry_run="All")
        except client.ApiException as exc:
            return json.loads(exc.body) if exc.status == 422 else None
        return None  # the new schema not in force yet

    refused = wait_for(spec_refused, what="the tightened schema in force")
    assert "spec.label: Too long: may not be longer than 4" in refused["message"]

    objs.patch_namespaced_custom_object_status(*args, {"status": {"nodes": ["a"]}})
    assert objs.get_namespaced_custom_object(*args)["status"] == {"nodes": ["a"]}
    objs.patch_namespaced_custom_object(*args, {"spec": {"size": 2, "label": "abcd"}})
    got = objs.get_namespaced_custom_object(*args)
    assert (got["spec"]["size"], got["spec"]["label"]) == (2, "abcd")
