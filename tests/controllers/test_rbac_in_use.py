"""Every API call the engine makes while running the operators is one the RBAC grants.

kubesim's request log names each call's verb and resource; the test's own calls carry a
user agent of their own and are left out.
"""

from __future__ import annotations

from typing import Any

import pytest

from controllers.base import SERVICE
from controllers.conditions import condition_of
from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from controllers.webserver.desired import WEBSERVER
from tests.controllers.manifests import grants_used, operator_grants
from tests.support.waiting import wait_for

pytestmark = [
    pytest.mark.kubesim_only,
    pytest.mark.django_db(transaction=True),
]
TEST_AGENT = "opsboard-tests/rbac"


def _condition(kube: ApiKube, kind: Any, namespace: str, name: str, type_: str) -> str | None:
    cr = kube.get(kind, namespace, name)
    return condition_of(cr, type_).get("status")


@pytest.fixture
def tagged_client(kube_api_client: Any, kubesim_server: Any, operator_crds: None) -> Any:
    """The test's own client, told apart by its user agent from before the engine starts."""
    kube_api_client.user_agent = TEST_AGENT
    kubesim_server.clear_request_log()
    return kube_api_client


def test_the_operators_use_only_what_the_rbac_grants(
    tagged_client: Any, running_engine: Any, kube: ApiKube, namespace: str, kubesim_server: Any
) -> None:
    # tagged_client comes first: the log is cleared before the engine starts and lists.
    for kind, spec in ((MEMCACHED, {"size": 1}), (WEBSERVER, {"replicas": 1})):
        body = {"apiVersion": kind.api_version, "kind": kind.kind, "spec": spec}
        kube.create(kind, {**body, "metadata": {"name": kind.plural, "namespace": namespace}})
    bad = {"size": 1, "image": "memcached:does-not-exist"}
    kube.create(
        MEMCACHED,
        {"apiVersion": MEMCACHED.api_version, "kind": MEMCACHED.kind, "spec": bad,
         "metadata": {"name": "bad", "namespace": namespace}},
    )  # fmt: skip
    for kind in (MEMCACHED, WEBSERVER):
        wait_for(lambda k=kind: _condition(kube, k, namespace, k.plural, "Available") == "True",
                   what=f"{kind} Available")  # fmt: skip
    wait_for(lambda: _condition(kube, MEMCACHED, namespace, "bad", "Degraded") == "True",
               what="Degraded")  # fmt: skip
    kube.delete(SERVICE, namespace, "webservers-service")
    wait_for(lambda: kube.get(SERVICE, namespace, "webservers-service"), what="Service restored")

    granted = operator_grants()
    used = grants_used(kubesim_server.request_log(), except_agent=TEST_AGENT)
    # The engine's calls were seen: the watcher's, the workers' and the Events. (A watch is
    # logged when it ends, so the watcher's initial lists stand for its watches.)
    assert {
        ("", "pods", "list"),
        ("apps", "deployments", "create"),
        ("", "events", "create"),
    } <= used
    assert used - granted == set(), sorted(used)
