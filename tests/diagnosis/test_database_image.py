"""A BookStore whose MongoDB image cannot be pulled: its page's Diagnosis names the CR's
field for that image (spec.bookDB.image, not the app's spec.bookApp.image) and points to
the change form, which sets it; reviewed and applied there, the database comes back. Real
watcher and worker, on kubesim and on a real cluster (OPSBOARD_TEST_KUBECONFIG)."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from controllers.bookstore.desired import BOOKSTORE
from controllers.conditions import condition_of
from controllers.kube import ApiKube
from opsboard.audit.models import AuditEntry
from tests.diagnosis.memcached_run import page_finding, start_operator_in, wait_degraded
from tests.fixtures.celery import EngineProcesses
from tests.support.review import review
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)
MISSING = "mongo:does-not-exist"  # kubesim's and the rig's kubelets fail to pull it


def test_a_database_image_that_cannot_be_pulled_is_named_and_set_right_from_the_form(
    engine: EngineProcesses, cluster_kube: ApiKube, namespace: str, operator_client: Client
) -> None:
    start_operator_in(engine, namespace, "controllers.bookstore")
    cluster_kube.create(BOOKSTORE, {
        "apiVersion": BOOKSTORE.api_version, "kind": "BookStore",
        "metadata": {"name": "shop", "namespace": namespace},
        "spec": {"bookApp": {"replicas": 1}, "bookDB": {"replicas": 1, "image": MISSING}},
    })  # fmt: skip
    wait_degraded(cluster_kube, BOOKSTORE, namespace, "shop", "ImagePullFailed")
    url, hx = f"/k/bookstore/{namespace}/shop/", {"HTTP_HX_REQUEST": "true"}
    finding = wait_for(
        lambda: page_finding(operator_client, url, "ImagePullBackOff"),
        what="the pull failure on the page",
    )
    assert f"cannot pull image {MISSING}" in finding.what
    assert finding.todo == (
        "Set spec.bookDB.image to an image that exists (check the name and tag), or give the "
        "pods a pull secret."
    )
    page = operator_client.get(url).content.decode()
    assert re.search(
        r'The <a href="#cr-patch-[^"]+">change form</a> above sets spec\.bookDB\.image\.', page
    )

    spec = cluster_kube.get(BOOKSTORE, namespace, "shop")["spec"]
    form = {"size": "1", "image": spec["bookApp"]["image"], "size_mongodb": "1",
            "image_mongodb": "mongo:7.0", "storage": spec["bookDB"]["dbSize"]}  # fmt: skip
    html, hidden = review(operator_client, url, form, **hx)
    assert re.search(
        rf"spec\.bookDB\.image</td><td><del>{MISSING}</del></td><td><ins>mongo:7\.0<", html
    ), html
    assert "Applied" in operator_client.post(url + "patch/apply/", hidden, **hx).content.decode()
    entry = AuditEntry.objects.get()
    assert (entry.before, entry.after) == (
        {"spec.bookDB.image": MISSING},
        {"spec.bookDB.image": "mongo:7.0"},
    )
    wait_for(
        lambda: (
            condition_of(cluster_kube.get(BOOKSTORE, namespace, "shop"), "Available").get("status")
            == "True"
        ),
        what="the BookStore available on the image that exists",
        timeout=120,
    )
