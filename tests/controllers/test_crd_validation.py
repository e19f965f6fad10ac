"""A user's mistake is rejected by the API with the field named, and nothing is stored."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.base import Kind, PermanentError
from controllers.bookstore.desired import BOOKSTORE
from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from controllers.ptemplate.desired import PTEMPLATE, SECRET
from controllers.webserver.desired import WEBSERVER
from tests.controllers.manifests import SAMPLE_FILES, load


def _body(kind: Kind, namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": {"name": "bad", "namespace": namespace},
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("kind", "spec", "field"),
    [
        (MEMCACHED, {"size": -1}, "spec.size"),
        (MEMCACHED, {"size": 1000}, "spec.size"),
        (MEMCACHED, {"image": "UPPER CASE:bad"}, "spec.image"),
        (WEBSERVER, {"replicas": "three"}, "spec.replicas"),
        (WEBSERVER, {"image": "UPPER CASE:bad"}, "spec.image"),
        (WEBSERVER, {"nodePort": 80}, "spec.nodePort"),
        (MEMCACHED, {"resources": {"limits": {"memory": "lots"}}}, "spec.resources.limits.memory"),
        (MEMCACHED, {"resources": {"requests": {"cpu": "-1"}}}, "spec.resources.requests.cpu"),
        (WEBSERVER, {"resources": {"limits": {"cpu": -2}}}, "spec.resources.limits.cpu"),
        (WEBSERVER, {"resources": {"limits": {"memory": 0.5}}}, "spec.resources.limits.memory"),
        (
            BOOKSTORE,
            {"bookDB": {"resources": {"limits": {"memory": "1 Gi"}}}},
            "spec.bookDB.resources.limits.memory",
        ),
    ],
    ids=lambda v: str(v),
)
def test_an_invalid_spec_is_rejected_naming_the_field(
    kube: ApiKube, namespace: str, kind: Kind, spec: dict[str, Any], field: str
) -> None:
    with pytest.raises(PermanentError, match=field):
        kube.create(kind, _body(kind, namespace, spec))
    assert kube.get(kind, namespace, "bad") is None


def test_a_missing_image_is_accepted_and_defaults_fill_the_spec(
    kube: ApiKube, namespace: str
) -> None:
    created = kube.create(
        MEMCACHED, _body(MEMCACHED, namespace, {"image": "memcached:does-not-exist"})
    )
    assert created["spec"] == {
        "size": 1,
        "image": "memcached:does-not-exist",
        "containerPort": 11211,
    }
    web = kube.create(WEBSERVER, _body(WEBSERVER, namespace, {}))
    assert web["spec"] == {"replicas": 1, "image": "nginx:1.23.1", "port": 80}


def test_the_samples_are_accepted_as_they_are(kube: ApiKube, namespace: str) -> None:
    for path in SAMPLE_FILES:
        for doc in load(path):
            kind = {k.kind: k for k in (MEMCACHED, WEBSERVER, BOOKSTORE, PTEMPLATE, SECRET)}[
                doc["kind"]
            ]
            doc["metadata"]["namespace"] = namespace
            created = kube.create(kind, doc)
            assert created.get("spec", {}).items() >= doc.get("spec", {}).items()


def test_resources_are_stored_as_written(kube: ApiKube, namespace: str) -> None:
    """The CRD checks quantities but leaves them as the person wrote them (the operator
    writes them to the pods as the server prints them)."""
    resources = {"limits": {"cpu": 1, "memory": "1024Mi"}, "requests": {"cpu": "0.5"}}
    created = kube.create(MEMCACHED, _body(MEMCACHED, namespace, {"resources": resources}))
    assert created["spec"]["resources"] == resources
