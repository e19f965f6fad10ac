"""A CR its CRD's schema now refuses as it stands (the schema tightened after it was
written): every change of its spec is refused, whatever field it sets, since the API server
validates the whole object. The review says which field is refused, that the change does
not touch it, and the form marks that field to be set right along with the change. On a
real API server (kubesim, or OPSBOARD_TEST_KUBECONFIG), in a CRD group of the test's own."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django.utils.html import escape
from kubernetes import client

from controllers.base import Controller, CrFields, Kind, Result
from controllers.kube import MERGE_PATCH, ApiKube, Invalid
from opsboard.audit.models import AuditEntry
from opsboard.dashboard.kinds import all_kinds
from tests.dashboard.mirror_factory import mirror_object
from tests.kubesim.support import established_crd
from tests.support.review import review
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db
TRINKET = Kind(f"t{uuid.uuid4().hex[:8]}.opsboard.dev", "v1", "Trinket", "trinkets")
# Registered by the fixture below (OPSBOARD_CONTROLLERS names this module).
CONTROLLER = Controller(
    name="trinket", primary=TRINKET, owns=(), reconcile=lambda ctx: Result.done(),
    expected_children=lambda cr: [], fields=CrFields(size="spec.size", image="spec.image"),
)  # fmt: skip
IMAGE = "registry.example.com/trinket:1.0"
HX = {"HTTP_HX_REQUEST": "true"}


def _crd() -> dict[str, Any]:
    spec = {"type": "object", "properties": {
        "size": {"type": "integer", "minimum": 0, "maximum": 20},
        "image": {"type": "string", "maxLength": 64}}}  # fmt: skip
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{TRINKET.plural}.{TRINKET.group}"},
        "spec": {
            "group": TRINKET.group, "scope": "Namespaced",
            "names": {"plural": TRINKET.plural, "singular": "trinket", "kind": TRINKET.kind},
            "versions": [{"name": "v1", "served": True, "storage": True,
                          "subresources": {"status": {}},
                          "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                              "spec": spec, "status": {"type": "object"}}}}}],
        },
    }  # fmt: skip


@pytest.fixture
def tightened(
    kube_api_client: client.ApiClient, cluster_kube: ApiKube, namespace: str, settings: Any
) -> Iterator[str]:
    """A Trinket written under a schema that took a 64-character image, now at most 10; the
    URL of its page."""
    with established_crd(kube_api_client, _crd()) as crd:
        settings.OPSBOARD_CONTROLLERS = [*settings.OPSBOARD_CONTROLLERS, __name__]
        all_kinds.cache_clear()
        spec = {"size": 1, "image": IMAGE}
        wait_for(lambda: _created(cluster_kube, namespace, spec), what="the Trinket created")
        mirror_object(TRINKET.kind, "t", namespace=namespace, api_version=TRINKET.api_version,
                      spec=spec)  # fmt: skip
        client.ApiextensionsV1Api(kube_api_client).patch_custom_resource_definition(
            crd["metadata"]["name"],
            [{"op": "replace", "value": 10, "path": "/spec/versions/0/schema/openAPIV3Schema/"
              "properties/spec/properties/image/maxLength"}],
        )  # fmt: skip
        wait_for(lambda: _refused(cluster_kube, namespace), what="the tightened schema in force")
        yield f"/k/trinket/{namespace}/t/"
    all_kinds.cache_clear()


def _created(kube: ApiKube, namespace: str, spec: dict[str, Any]) -> bool:
    body = {"apiVersion": TRINKET.api_version, "kind": TRINKET.kind,
            "metadata": {"name": "t", "namespace": namespace}, "spec": spec}  # fmt: skip
    try:  # a real API server serves a CRD a moment after it is Established
        kube.create(TRINKET, body)
    except Exception:
        return False
    return True


def _refused(kube: ApiKube, namespace: str) -> bool:
    try:
        kube.request(
            "PATCH", ApiKube.path(TRINKET, namespace, "t"), body={"spec": {"size": 2}},
            content_type=MERGE_PATCH, query={"dryRun": "All"},
        )  # fmt: skip
    except Invalid:
        return True
    return False


def test_a_field_the_schema_now_refuses_is_named_and_set_right_with_the_change(
    operator_client: Client, cluster_kube: ApiKube, namespace: str, tightened: str
) -> None:
    html, _ = review(operator_client, tightened, {"size": "2", "image": IMAGE}, **HX)
    assert (
        escape(
            "The cluster refused the change, and nothing was changed: the object as it stands is "
            "invalid in spec.image, which this change does not touch. The CRD's schema refuses its "
            "current value (most likely set before the schema changed), and Kubernetes checks the "
            "whole object whenever its spec changes. Set spec.image to a valid value along with "
            "this change. (The API server said: "
        )
        in html
    )
    assert "spec.image: Too long: may not be longer than 10)" in html
    assert "The cluster refuses this value as it stands: give a valid one." in html
    assert 'class="field invalid"' in html.split('name="image"')[0].rsplit("<p ", 1)[1]

    # An image the form takes but the schema does not: the API server's own refusal.
    html, _ = review(operator_client, tightened, {"size": "2", "image": "trinket:1.0.1"}, **HX)
    assert "does not touch" not in html and "may not be longer than 10" in html

    html, hidden = review(operator_client, tightened, {"size": "2", "image": "trinket:1"}, **HX)
    assert "accepted this change in a dry run" in html, html
    operator_client.post(tightened + "patch/apply/", hidden, **HX)
    live = cluster_kube.get(TRINKET, namespace, "t")["spec"]
    assert (live["size"], live["image"]) == (2, "trinket:1")
    entry = AuditEntry.objects.get()
    assert entry.after == {"spec.size": 2, "spec.image": "trinket:1"}
