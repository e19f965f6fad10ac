"""With impersonation, the CR page asks the cluster what each field's change needs: a size
alone goes through `memcacheds/scale`, an image is a patch of `memcacheds`. A Role that
grants one of the two holds only the other field, saying which verb and resource are
missing; the field it grants still changes the CR."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest
from django.test import Client
from kubernetes import client

from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from tests.dashboard.cluster_fixtures import IMPERSONATION_SPEC, operator_in_group
from tests.support.review import review_and_apply

pytestmark = pytest.mark.django_db
GROUP = "cache.example.com"
RULES = {
    "patch-only": [{"apiGroups": [GROUP], "resources": ["memcacheds"], "verbs": ["get", "patch"]}],
    "scale-only": [
        {"apiGroups": [GROUP], "resources": ["memcacheds"], "verbs": ["get"]},
        {"apiGroups": [GROUP], "resources": ["memcacheds/scale"], "verbs": ["get", "patch"]},
    ],
}


def _person_with(rules: str, namespace: str, kube_api_client: Any, settings: Any) -> Client:
    rbac = client.RbacAuthorizationV1Api(kube_api_client)
    rbac.create_namespaced_role(namespace, {"metadata": {"name": rules}, "rules": RULES[rules]})
    rbac.create_namespaced_role_binding(namespace, {
        "metadata": {"name": rules},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": rules},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": rules}],
    })  # fmt: skip
    return operator_in_group(settings, rules)


def _field(page: str, name: str) -> str:
    """The form's paragraph of one field."""
    match = re.search(rf'<p class="field[^"]*">\s*<label for="id_{name}">.*?</p>', page, re.S)
    assert match, name
    return match.group(0)


def _apply(person: Client, url: str, size: int, image: str) -> str:
    return unescape(review_and_apply(person, url, {"size": size, "image": image}))


def test_patch_without_scale_holds_the_size_and_changes_the_image(
    impersonation_rbac: str, namespace: str, kube_api_client: Any, settings: Any,
    cluster_kube: ApiKube,
) -> None:  # fmt: skip
    person = _person_with("patch-only", namespace, kube_api_client, settings)
    page = unescape(person.get(impersonation_rbac).content.decode())
    size, image = _field(page, "size"), _field(page, "image")
    assert "refused" in size and "readonly" in size
    assert (
        f'"rita" (groups patch-only) may not patch memcacheds/scale (API group {GROUP}) '
        f"in namespace {namespace}"
    ) in size
    assert "readonly" not in image and "refuses" not in image
    assert "Applied:" in _apply(person, impersonation_rbac, 3, "memcached:1.6.21-alpine")
    spec = cluster_kube.get(MEMCACHED, namespace, "cache-a")["spec"]
    assert (spec["size"], spec["image"]) == (3, "memcached:1.6.21-alpine")


def test_scale_without_patch_holds_the_image_and_changes_the_size(
    impersonation_rbac: str, namespace: str, kube_api_client: Any, settings: Any,
    cluster_kube: ApiKube,
) -> None:  # fmt: skip
    person = _person_with("scale-only", namespace, kube_api_client, settings)
    page = unescape(person.get(impersonation_rbac).content.decode())
    size, image = _field(page, "size"), _field(page, "image")
    assert "readonly" in image
    assert f"may not patch memcacheds (API group {GROUP}) in namespace {namespace}" in image
    assert "readonly" not in size and "refuses" not in size
    assert "Applied:" in _apply(person, impersonation_rbac, 4, IMPERSONATION_SPEC["image"])
    assert cluster_kube.get(MEMCACHED, namespace, "cache-a")["spec"]["size"] == 4
