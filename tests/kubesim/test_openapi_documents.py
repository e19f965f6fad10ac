"""The OpenAPI v3 documents of built-in group-versions: kube-apiserver's own, and a skeleton
for a kind kubesim serves that they lack."""

from __future__ import annotations

from kubesim.jsonutil import loads
from kubesim.openapi import document_bytes, index
from kubesim.resources import Registry, ResourceType

WIDGET = ResourceType(
    group="apps", version="v1", plural="widgets", singular="widget", kind="Widget"
)


def test_a_built_in_group_version_is_kube_apiservers_document() -> None:
    doc = loads(document_bytes(Registry(), "apps", "v1") or b"")
    assert doc["info"] == {"title": "Kubernetes", "version": "v1.28.7"}
    spec = doc["components"]["schemas"]["io.k8s.api.apps.v1.DeploymentSpec"]
    assert spec["properties"]["replicas"] == {
        "description": "Number of desired pods. This is a pointer to distinguish between "
        "explicit zero and not specified. Defaults to 1.",
        "type": "integer",
        "format": "int32",
    }


def test_a_kind_the_document_lacks_gets_a_skeleton_beside_the_real_kinds() -> None:
    registry = Registry()
    registry.add(WIDGET)
    doc = loads(document_bytes(registry, "apps", "v1") or b"")
    schemas = doc["components"]["schemas"]
    assert (
        "DeploymentSpec"
        in schemas["io.k8s.api.apps.v1.Deployment"]["properties"]["spec"]["allOf"][0]["$ref"]
    )
    widget = schemas["io.k8s.api.apps.v1.Widget"]
    assert widget["x-kubernetes-preserve-unknown-fields"] is True
    assert widget["x-kubernetes-group-version-kind"] == [
        {"group": "apps", "version": "v1", "kind": "Widget"}
    ]
    assert "patch" in doc["paths"]["/apis/apps/v1/namespaces/{namespace}/widgets/{name}"]


def test_the_index_hash_changes_with_the_kinds_a_vendored_document_is_served_with() -> None:
    registry = Registry()
    before = index(registry)["paths"]["apis/apps/v1"]["serverRelativeURL"]
    registry.add(WIDGET)
    after = index(registry)["paths"]["apis/apps/v1"]["serverRelativeURL"]
    assert (
        before != after and index(registry)["paths"]["apis/apps/v1"]["serverRelativeURL"] == after
    )


def test_a_custom_resources_group_has_no_group_document() -> None:
    """kube-apiserver lists a group's own document for its built-in groups only."""
    registry = Registry()
    registry.add(
        ResourceType(
            group="cache.example.com",
            version="v1",
            plural="caches",
            singular="cache",
            kind="Cache",
            crd="caches.cache.example.com",
        )
    )
    paths = index(registry)["paths"]
    assert "apis/cache.example.com/v1" in paths and "apis/apps" in paths
    assert "apis/cache.example.com" not in paths
