from __future__ import annotations

import re
from typing import Any

import pytest

from controllers import memcached, webserver
from controllers.base import Controller
from controllers.images import IMAGE_PATTERN
from controllers.memcached import desired as memcached_desired
from controllers.resources import QUANTITY_RE
from controllers.webserver import desired as webserver_desired
from tests.controllers.manifests import SAMPLE_FILES, crd, load

CONTROLLERS = [memcached.CONTROLLER, webserver.CONTROLLER]


def _version(controller: Controller) -> dict[str, Any]:
    doc = crd(controller.primary.plural)
    [version] = doc["spec"]["versions"]
    return version


def _spec_schema(controller: Controller) -> dict[str, Any]:
    return _version(controller)["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]


@pytest.mark.parametrize("controller", CONTROLLERS, ids=lambda c: c.name)
def test_crd_serves_the_kind_the_controller_reconciles(controller: Controller) -> None:
    doc = crd(controller.primary.plural)
    assert doc["metadata"]["name"] == controller.primary.resource
    assert doc["spec"]["group"] == controller.primary.group
    assert doc["spec"]["names"]["kind"] == controller.primary.kind
    assert doc["spec"]["scope"] == "Namespaced"
    assert _version(controller)["name"] == controller.primary.version
    assert "opsboard" in doc["spec"]["names"]["categories"]


@pytest.mark.parametrize("controller", CONTROLLERS, ids=lambda c: c.name)
def test_crd_scale_subresource_points_at_the_size_field_and_the_status(
    controller: Controller,
) -> None:
    subresources = _version(controller)["subresources"]
    assert subresources["status"] == {}
    assert subresources["scale"] == {
        "specReplicasPath": f".{controller.fields.size}",
        "statusReplicasPath": ".status.readyReplicas",
        "labelSelectorPath": ".status.selector",
    }


@pytest.mark.parametrize("controller", CONTROLLERS, ids=lambda c: c.name)
def test_crd_validates_images_with_the_pattern_the_controller_uses(controller: Controller) -> None:
    assert _spec_schema(controller)["image"]["pattern"] == IMAGE_PATTERN


@pytest.mark.parametrize("controller", CONTROLLERS, ids=lambda c: c.name)
def test_crd_size_is_a_bounded_non_negative_integer(controller: Controller) -> None:
    field = _spec_schema(controller)[controller.fields.size.removeprefix("spec.")]
    assert (field["type"], field["minimum"]) == ("integer", 0)
    assert 0 < field["maximum"] <= 1000


def test_crd_defaults_are_the_defaults_the_builders_use() -> None:
    mc = _spec_schema(memcached.CONTROLLER)
    assert mc["size"]["default"] == memcached_desired.DEFAULT_SIZE
    assert mc["image"]["default"] == memcached_desired.DEFAULT_IMAGE
    assert mc["containerPort"]["default"] == memcached_desired.DEFAULT_PORT
    ws = _spec_schema(webserver.CONTROLLER)
    assert ws["replicas"]["default"] == webserver_desired.DEFAULT_REPLICAS
    assert ws["image"]["default"] == webserver_desired.DEFAULT_IMAGE
    assert ws["port"]["default"] == webserver_desired.DEFAULT_PORT
    assert "default" not in ws["nodePort"]


@pytest.mark.parametrize("controller", CONTROLLERS, ids=lambda c: c.name)
def test_crd_printer_columns_show_size_ready_image_and_age(controller: Controller) -> None:
    columns = {c["jsonPath"]: c["name"] for c in _version(controller)["additionalPrinterColumns"]}
    assert columns[f".{controller.fields.size}"] in ("Size", "Replicas")
    assert columns[".status.readyReplicas"] == "Ready"
    assert columns[".spec.image"] == "Image"
    assert columns[".metadata.creationTimestamp"] == "Age"


def test_samples_are_memcached_of_size_3_and_three_nginx_1_23_1_webservers() -> None:
    samples = {doc["kind"]: doc for path in SAMPLE_FILES for doc in load(path)}
    assert samples["Memcached"]["metadata"]["name"] == "memcached-sample"
    assert samples["Memcached"]["spec"] == {"size": 3}
    assert samples["WebServer"]["metadata"]["name"] == "webserver-sample"
    assert samples["WebServer"]["spec"] == {"replicas": 3, "image": "nginx:1.23.1"}


def _resource_fields(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """Every cpu and memory quantity under a `resources` field of a spec schema."""
    found = []
    for name, field in schema.items():
        if name == "resources":
            for part in field["properties"].values():
                found += part["properties"].values()
        elif "properties" in field:
            found += _resource_fields(field["properties"])
    return found


@pytest.mark.parametrize("plural", ["memcacheds", "webservers", "bookstores", "ptemplates"])
def test_crd_quantities_follow_the_pattern_the_controllers_read(plural: str) -> None:
    [version] = crd(plural)["spec"]["versions"]
    fields = _resource_fields(
        version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    )
    assert len(fields) == (8 if plural == "bookstores" else 4)
    pattern = re.sub(r"\(\?P<\w+>", "(?:", QUANTITY_RE.pattern)
    for field in fields:
        assert field["pattern"] == pattern
        assert field["x-kubernetes-int-or-string"] is True
        assert field["minimum"] == 0
