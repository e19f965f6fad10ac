"""The BookStore CRD: what it serves, and what it refuses (against the API server)."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.base import PermanentError
from controllers.bookstore import CONTROLLER
from controllers.bookstore import desired as bs
from controllers.bookstore.desired import BOOKSTORE
from controllers.bookstore.quantity import QUANTITY_PATTERN
from controllers.images import IMAGE_PATTERN
from controllers.kube import ApiKube
from tests.controllers.manifests import SAMPLE_FILES, crd, load


def _version() -> dict[str, Any]:
    [version] = crd(BOOKSTORE.plural)["spec"]["versions"]
    return version


def _schema(path: str) -> dict[str, Any]:
    node: dict[str, Any] = _version()["schema"]["openAPIV3Schema"]
    for part in path.split("."):
        node = node["properties"][part]
    return node


def test_crd_serves_the_kind_the_controller_reconciles() -> None:
    doc = crd(BOOKSTORE.plural)
    assert doc["metadata"]["name"] == BOOKSTORE.resource == "bookstores.blog.velotio.com"
    assert doc["spec"]["names"]["kind"] == "BookStore"
    assert doc["spec"]["scope"] == "Namespaced"
    assert _version()["name"] == BOOKSTORE.version
    assert "opsboard" in doc["spec"]["names"]["categories"]


def test_scale_subresource_is_the_apps_replicas_as_the_dashboard_patches_them() -> None:
    assert CONTROLLER.fields.size == "spec.bookApp.replicas"
    assert CONTROLLER.fields.image == "spec.bookApp.image"
    assert _version()["subresources"] == {
        "status": {},
        "scale": {
            "specReplicasPath": ".spec.bookApp.replicas",
            "statusReplicasPath": ".status.readyReplicas",
            "labelSelectorPath": ".status.selector",
        },
    }


def test_schema_bounds_replicas_and_patterns_images_and_sizes() -> None:
    for path in ("spec.bookApp.replicas", "spec.bookDB.replicas"):
        field = _schema(path)
        assert (field["type"], field["minimum"], field["maximum"]) == ("integer", 0, 100)
    for path in ("spec.bookApp.image", "spec.bookDB.image"):
        assert _schema(path)["pattern"] == IMAGE_PATTERN
    assert _schema("spec.bookDB.dbSize")["pattern"] == QUANTITY_PATTERN


def test_crd_defaults_are_the_defaults_the_builders_use() -> None:
    assert _schema("spec.bookApp.replicas")["default"] == bs.DEFAULT_APP_REPLICAS
    assert _schema("spec.bookApp.image")["default"] == bs.DEFAULT_APP_IMAGE
    assert _schema("spec.bookApp.port")["default"] == bs.DEFAULT_APP_PORT
    assert _schema("spec.bookApp.targetPort")["default"] == bs.DEFAULT_APP_TARGET_PORT
    assert _schema("spec.bookApp.serviceType")["default"] == bs.DEFAULT_SERVICE_TYPE
    assert _schema("spec.bookDB.replicas")["default"] == bs.DEFAULT_DB_REPLICAS
    assert _schema("spec.bookDB.image")["default"] == bs.DEFAULT_DB_IMAGE
    assert _schema("spec.bookDB.port")["default"] == bs.DEFAULT_DB_PORT
    assert _schema("spec.bookDB.dbSize")["default"] == bs.DEFAULT_DB_SIZE


def test_printer_columns_show_replicas_ready_image_db_node_port_and_age() -> None:
    columns = {c["jsonPath"]: c["name"] for c in _version()["additionalPrinterColumns"]}
    assert columns == {
        ".spec.bookApp.replicas": "Replicas",
        ".status.readyReplicas": "Ready",
        ".spec.bookApp.image": "Image",
        ".status.dbReadyReplicas": "DB Ready",
        ".status.nodePort": "NodePort",
        ".spec.bookDB.dbSize": "DB Size",
        ".metadata.creationTimestamp": "Age",
    }


def test_sample_is_two_app_pods_and_one_db_of_2gi() -> None:
    [sample] = [doc for path in SAMPLE_FILES for doc in load(path) if doc["kind"] == "BookStore"]
    assert sample["metadata"]["name"] == "bookstore-sample"
    assert sample["spec"]["bookApp"]["replicas"] == 2
    assert sample["spec"]["bookDB"]["dbSize"] == "2Gi"


def _body(namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": BOOKSTORE.api_version,
        "kind": BOOKSTORE.kind,
        "metadata": {"name": "bad", "namespace": namespace},
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"bookApp": {"replicas": -1}}, "spec.bookApp.replicas"),
        ({"bookApp": {"replicas": 101}}, "spec.bookApp.replicas"),
        ({"bookApp": {"replicas": "three"}}, "spec.bookApp.replicas"),
        ({"bookApp": {"image": "UPPER CASE:bad"}}, "spec.bookApp.image"),
        ({"bookApp": {"serviceType": "ExternalName"}}, "spec.bookApp.serviceType"),
        ({"bookApp": {"port": 0}}, "spec.bookApp.port"),
        ({"bookDB": {"replicas": -1}}, "spec.bookDB.replicas"),
        ({"bookDB": {"image": "mongo:UPPER CASE"}}, "spec.bookDB.image"),
        ({"bookDB": {"dbSize": "2 GB"}}, "spec.bookDB.dbSize"),
        ({"bookDB": {"dbSize": "-1Gi"}}, "spec.bookDB.dbSize"),
        ({"bookDB": {"dbSize": 2}}, "spec.bookDB.dbSize"),
        ({"bookDB": "mongo"}, "spec.bookDB"),
    ],
    ids=lambda v: str(v),
)
def test_an_invalid_spec_is_rejected_naming_the_field(
    kube: ApiKube, namespace: str, spec: dict[str, Any], field: str
) -> None:
    with pytest.raises(PermanentError, match=field):
        kube.create(BOOKSTORE, _body(namespace, spec))
    assert kube.get(BOOKSTORE, namespace, "bad") is None


def test_defaults_fill_an_empty_spec(kube: ApiKube, namespace: str) -> None:
    created = kube.create(BOOKSTORE, _body(namespace, {}))
    assert created["spec"] == {
        "bookApp": {
            "image": "akash125/pyapp:latest",
            "replicas": 1,
            "port": 80,
            "targetPort": 3000,
            "serviceType": "NodePort",
        },
        "bookDB": {"image": "mongo:7.0", "replicas": 1, "port": 27017, "dbSize": "1Gi"},
    }
