"""Discovery and OpenAPI documents, shaped as kube-apiserver serves them."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from kubernetes import client

from tests.kubesim.support import raw

Api = client.ApiClient


def test_version(kube_api_client: Api) -> None:
    info = client.VersionApi(kube_api_client).get_code()
    assert info.major == "1" and info.git_version.startswith("v1.")


def test_core_api_and_group_list(kube_api_client: Api) -> None:
    assert raw(kube_api_client, "GET", "/api").json()["versions"] == ["v1"]
    groups = {g["name"]: g for g in raw(kube_api_client, "GET", "/apis").json()["groups"]}
    for name in (
        "apps",
        "apiextensions.k8s.io",
        "coordination.k8s.io",
        "events.k8s.io",
        "discovery.k8s.io",
        "rbac.authorization.k8s.io",
    ):
        assert groups[name]["preferredVersion"]["version"] == "v1"
    apps = raw(kube_api_client, "GET", "/apis/apps").json()
    assert apps["kind"] == "APIGroup" and apps["versions"][0]["groupVersion"] == "apps/v1"


def test_resource_lists_carry_kinds_verbs_and_subresources(kube_api_client: Api) -> None:
    core = {r["name"]: r for r in raw(kube_api_client, "GET", "/api/v1").json()["resources"]}
    assert core["pods"]["kind"] == "Pod" and core["pods"]["shortNames"] == ["po"]
    assert core["pods"]["categories"] == ["all"]
    assert core["namespaces"]["namespaced"] is False
    assert "deletecollection" not in core["namespaces"]["verbs"]
    assert core["pods/status"]["verbs"] == ["get", "patch", "update"]
    apps = raw(kube_api_client, "GET", "/apis/apps/v1").json()
    assert apps["kind"] == "APIResourceList" and apps["groupVersion"] == "apps/v1"
    by_name = {r["name"]: r for r in apps["resources"]}
    assert sorted(by_name["deployments"]["verbs"]) == sorted(
        ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
    )
    assert by_name["deployments/scale"] == {
        "name": "deployments/scale",
        "singularName": "",
        "namespaced": True,
        "group": "autoscaling",
        "version": "v1",
        "kind": "Scale",
        "verbs": ["get", "patch", "update"],
    }
    assert "deployments/status" in by_name and "statefulsets/scale" in by_name
    assert "daemonsets/scale" not in by_name


def test_openapi_v3_index_and_documents(kube_api_client: Api) -> None:
    paths = raw(kube_api_client, "GET", "/openapi/v3").json()["paths"]
    assert "api/v1" in paths and "apis/apps/v1" in paths
    doc = raw(kube_api_client, "GET", paths["apis/apps/v1"]["serverRelativeURL"]).json()
    op = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert op["x-kubernetes-group-version-kind"] == {
        "group": "apps",
        "version": "v1",
        "kind": "Deployment",
    }
    assert "fieldValidation" in json.dumps(op["parameters"])  # inline or a $ref


@pytest.mark.parametrize(
    ("group_version", "name"),
    [
        ("api/v1", "io.k8s.api.core.v1.Pod"),
        ("apis/apps/v1", "io.k8s.api.apps.v1.Deployment"),
        ("apis/networking.k8s.io/v1", "io.k8s.api.networking.v1.NetworkPolicy"),
        ("apis/policy/v1", "io.k8s.api.policy.v1.PodDisruptionBudget"),
        (
            "apis/apiextensions.k8s.io/v1",
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
        ),
    ],
)
def test_openapi_v3_names_built_in_kinds_as_kube_apiserver_does(
    kube_api_client: Api, group_version: str, name: str
) -> None:
    paths = raw(kube_api_client, "GET", "/openapi/v3").json()["paths"]
    doc = raw(kube_api_client, "GET", paths[group_version]["serverRelativeURL"]).json()
    assert name in doc["components"]["schemas"]


def test_openapi_v3_document_asked_by_its_hash_is_kept_for_good(kube_api_client: Api) -> None:
    """kubectl's HTTP cache then keeps it, as kube-apiserver lets it; an old hash redirects
    to the current one, and a client that has the document is told it has not changed."""
    paths = raw(kube_api_client, "GET", "/openapi/v3").json()["paths"]
    url = paths["apis/apps/v1"]["serverRelativeURL"]
    got = raw(kube_api_client, "GET", url)
    assert got.status == 200 and got.headers["Cache-Control"] == "public, immutable"
    assert url.endswith("?hash=" + got.headers["ETag"].strip('"'))
    unchanged = raw(kube_api_client, "GET", url, headers={"If-None-Match": got.headers["ETag"]})
    assert unchanged.status == 304
    old = raw(kube_api_client, "GET", "/openapi/v3/apis/apps/v1?hash=0123456789ABCDEF")
    assert old.status == 301 and old.headers["Location"] == url
    unasked = raw(kube_api_client, "GET", "/openapi/v3/apis/apps/v1")
    assert unasked.status == 200 and unasked.headers["Cache-Control"] == "no-cache, private"


@pytest.mark.parametrize(
    ("path", "served", "operation"),
    [
        ("api", "/api/", "getCoreAPIVersions"),
        ("apis", "/apis/", "getAPIVersions"),
        ("apis/apps", "/apis/apps/", "getAppsAPIGroup"),
        ("apis/rbac.authorization.k8s.io", "/apis/rbac.authorization.k8s.io/", None),
        ("version", "/version/", "getCodeVersion"),
    ],
)
def test_openapi_v3_index_lists_the_discovery_and_version_documents(
    kube_api_client: Api, path: str, served: str, operation: str | None
) -> None:
    """Beside the group-versions', kube-apiserver lists the documents of /api, /apis, each
    built-in group and /version, each hashed with the whole SHA-512 of its content."""
    paths = raw(kube_api_client, "GET", "/openapi/v3").json()["paths"]
    url = paths[path]["serverRelativeURL"]
    digest = url.split("?hash=")[1]
    got = raw(kube_api_client, "GET", url)
    assert got.status == 200 and got.headers["Cache-Control"] == "public, immutable"
    assert hashlib.sha512(got.data).hexdigest().upper() == digest
    doc = got.json()
    assert doc["info"] == {"title": "Kubernetes", "version": "v1.28.7"}
    assert list(doc["paths"]) == [served]
    if operation:
        assert doc["paths"][served]["get"]["operationId"] == operation


def test_openapi_v3_hashes_are_the_whole_sha512(kube_api_client: Api) -> None:
    paths = raw(kube_api_client, "GET", "/openapi/v3").json()["paths"]
    for entry in paths.values():
        assert re.fullmatch(r"/openapi/v3/\S+\?hash=[0-9A-F]{128}", entry["serverRelativeURL"])


def test_openapi_v3_path_without_a_document_is_an_empty_404(kube_api_client: Api) -> None:
    for path in ("apis/no.such.group", "apis/apps/v9", "api/v1/pods"):
        got = raw(kube_api_client, "GET", f"/openapi/v3/{path}")
        assert (got.status, got.data, got.headers.get("Content-Type")) == (404, b"", None)
