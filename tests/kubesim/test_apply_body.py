"""A server-side apply's body must name the endpoint's apiVersion and kind exactly: anything
else is kube-apiserver's 400 `invalid object type: GROUP/VERSION, Kind=KIND`, naming what
the body said (before its name or namespace are looked at); a body that is not a map is a
YAML decoding error."""

from __future__ import annotations

import pytest
from kubernetes import client

from tests.kubesim.support import raw, workload

Api = client.ApiClient
APPLY = "application/apply-patch+yaml"


def _apply(api: Api, path: str, body: str) -> tuple[int, str | None]:
    resp = raw(api, "PATCH", f"{path}?fieldManager=t", body=body.encode(), content_type=APPLY)
    return resp.status, resp.json().get("message")


def _refused(gvk: str) -> tuple[int, str]:
    return 400, f"invalid object type: {gvk}"


@pytest.mark.parametrize(
    ("body", "gvk"),
    [
        ('{"metadata": {"name": "a"}, "data": {"x": "1"}}', "/, Kind="),
        ('{"apiVersion": "v1", "metadata": {"name": "a"}}', "/v1, Kind="),
        ('{"kind": "ConfigMap", "metadata": {"name": "a"}}', "/, Kind=ConfigMap"),
        ('{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"}}', "/v1, Kind=Secret"),
        ('{"apiVersion": "apps/v1", "kind": "ConfigMap"}', "apps/v1, Kind=ConfigMap"),
        ('{"apiVersion": "v2", "kind": "ConfigMap"}', "/v2, Kind=ConfigMap"),
        # an apiVersion Go cannot parse empties the kind too; a value not a string is empty
        ('{"apiVersion": "a/v1/x", "kind": "ConfigMap"}', "/, Kind="),
        ('{"apiVersion": 1, "kind": "ConfigMap"}', "/, Kind=ConfigMap"),
        ('{"apiVersion": "v1", "kind": "configmap"}', "/v1, Kind=configmap"),
        ("metadata:\n  name: a\n", "/, Kind="),
        ("", "/, Kind="),
    ],
)
def test_an_apply_that_does_not_name_the_endpoints_kind_is_refused(
    kube_api_client: Api, namespace: str, body: str, gvk: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps/a"
    assert _apply(kube_api_client, path, body) == _refused(gvk)
    ok = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}'
    assert _apply(kube_api_client, path, ok) == (201, None)


def test_the_kind_is_checked_before_the_name_and_the_namespace(
    kube_api_client: Api, namespace: str
) -> None:
    deployments = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    renamed = '{"apiVersion": "apps/v1beta1", "kind": "Deployment", "metadata": {"name": "e"}}'
    assert _apply(kube_api_client, f"{deployments}/d", renamed) == _refused(
        "apps/v1beta1, Kind=Deployment"
    )
    nowhere = "/apis/apps/v1/namespaces/no-such-namespace/deployments/d"
    assert _apply(kube_api_client, nowhere, '{"metadata": {"name": "d"}}') == _refused("/, Kind=")


def test_a_subresource_wants_its_own_kind_once_the_object_exists(
    kube_api_client: Api, namespace: str
) -> None:
    deployments = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    no_kind = '{"metadata": {"name": "d"}}'
    missing = (404, 'deployments.apps "d" not found')
    assert _apply(kube_api_client, f"{deployments}/d/status", no_kind) == missing
    assert _apply(kube_api_client, f"{deployments}/d/scale", no_kind) == missing
    raw(kube_api_client, "POST", deployments, body=workload("Deployment", "d"))
    assert _apply(kube_api_client, f"{deployments}/d/status", no_kind) == _refused("/, Kind=")
    deployment = '{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}'
    assert _apply(kube_api_client, f"{deployments}/d/scale", deployment) == _refused(
        "apps/v1, Kind=Deployment"
    )
    assert _apply(kube_api_client, f"{deployments}/d/status", deployment)[0] == 200


@pytest.mark.parametrize(
    ("body", "go_type"), [("[1]", "array"), ('"x"', "string"), ("1", "number"), ("true", "bool")]
)
def test_an_apply_body_that_is_not_a_map_cannot_be_decoded(
    kube_api_client: Api, namespace: str, body: str, go_type: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps/a"
    assert _apply(kube_api_client, path, body) == (
        400,
        "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot "
        f"unmarshal {go_type} into Go value of type map[string]interface {{}}",
    )
