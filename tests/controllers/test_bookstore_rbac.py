"""Every API call the engine makes running the BookStore operator is one the RBAC grants:
creating the app and its DB, growing the DB's claims, restoring a deleted child.

kubesim's request log names each call's verb and resource; the test's own calls carry a
user agent of their own and are left out.
"""

from __future__ import annotations

from typing import Any

import pytest

from controllers.base import PVC, SERVICE
from controllers.bookstore.desired import BOOKSTORE
from controllers.conditions import condition_of
from controllers.fields import deep_get
from controllers.kube import ApiKube
from tests.controllers.manifests import grants_used, operator_grants
from tests.fixtures.celery import EngineProcesses
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.kubesim_only, pytest.mark.django_db(transaction=True)]
TEST_AGENT = "opsboard-tests/rbac-bookstore"


def _condition(kube: ApiKube, namespace: str, type_: str) -> str | None:
    cr = kube.get(BOOKSTORE, namespace, "shop")
    return condition_of(cr, type_).get("status")


def _available(kube: ApiKube, namespace: str) -> bool:
    return _condition(kube, namespace, "Available") == "True"


@pytest.fixture
def tagged_client(kube_api_client: Any, kubesim_server: Any, operator_crds: None) -> Any:
    """The test's own client, told apart by its user agent from before the engine starts."""
    kube_api_client.user_agent = TEST_AGENT
    kubesim_server.clear_request_log()
    return kube_api_client


def test_the_bookstore_operator_uses_only_what_the_rbac_grants(
    tagged_client: Any, engine: EngineProcesses, kube: ApiKube, namespace: str, kubesim_server: Any
) -> None:
    engine.controllers = "controllers.bookstore"
    engine.start_worker(concurrency=2)
    engine.start_watcher()
    body = {
        "apiVersion": BOOKSTORE.api_version,
        "kind": BOOKSTORE.kind,
        "metadata": {"name": "shop", "namespace": namespace},
        "spec": {"bookDB": {"dbSize": "1Gi"}},
    }
    kube.create(BOOKSTORE, body)
    wait_for(lambda: _available(kube, namespace), timeout=60, what="BookStore Available")
    kube.patch(BOOKSTORE, namespace, "shop", {"spec": {"bookDB": {"dbSize": "2Gi"}}})
    wait_for(
        lambda: (
            deep_get(kube.get(PVC, namespace, "data-shop-db-0"), "spec.resources.requests.storage")
            == "2Gi"
        ),
        what="the claim grown",
    )
    kube.delete(SERVICE, namespace, "shop-db")
    wait_for(lambda: kube.get(SERVICE, namespace, "shop-db"), what="DB Service restored")
    # A DB image that cannot be pulled, then fixed: the stuck pod is deleted (forced rollback).
    kube.patch(
        BOOKSTORE, namespace, "shop", {"spec": {"bookDB": {"image": "mongo:does-not-exist"}}}
    )
    wait_for(lambda: _condition(kube, namespace, "Degraded") == "True", what="Degraded")
    kube.patch(BOOKSTORE, namespace, "shop", {"spec": {"bookDB": {"image": "mongo:7.0"}}})
    wait_for(lambda: _condition(kube, namespace, "Degraded") == "False", timeout=60,
               what="Degraded=False again")  # fmt: skip

    granted = operator_grants()
    used = grants_used(kubesim_server.request_log(), except_agent=TEST_AGENT)
    assert {
        ("apps", "statefulsets", "create"),
        ("", "persistentvolumeclaims", "patch"),
        ("blog.velotio.com", "bookstores/status", "patch"),
        ("", "services", "create"),
        ("", "pods", "delete"),
    } <= used
    assert used - granted == set(), sorted(used)
