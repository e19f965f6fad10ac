"""The operators' writes name their writer: the API server records "opsboard" as their
field manager (managedFields) and user agent (its audit log), not the Python client's
"OpenAPI-Generator" that any other script would share. kubesim's request log shows the
fieldManager each write sent (managedFields keep only each field's last owner)."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.kube import OPERATOR_FIELD_MANAGER, ApiKube
from controllers.memcached.desired import MEMCACHED
from tests.controllers.test_rbac_in_use import _condition
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.kubesim_only, pytest.mark.django_db(transaction=True)]
TEST_AGENT = "opsboard-tests/field-manager"


@pytest.fixture
def tagged_client(kube_api_client: Any, kubesim_server: Any, operator_crds: None) -> Any:
    kube_api_client.user_agent = TEST_AGENT
    kubesim_server.clear_request_log()
    return kube_api_client


def test_every_write_of_a_reconcile_names_opsboard_as_its_field_manager(
    tagged_client: Any, running_engine: Any, kube: ApiKube, namespace: str, kubesim_server: Any
) -> None:
    body = {"apiVersion": MEMCACHED.api_version, "kind": MEMCACHED.kind, "spec": {"size": 1}}
    kube.create(MEMCACHED, {**body, "metadata": {"name": "fm", "namespace": namespace}})
    wait_for(lambda: _condition(kube, MEMCACHED, namespace, "fm", "Available") == "True",
             what="Memcached Available")  # fmt: skip
    writes = [
        r for r in kubesim_server.request_log()
        if r.method in ("POST", "PUT", "PATCH") and r.user_agent != TEST_AGENT
    ]  # fmt: skip
    # The Deployment it created, the status it wrote, the Events it posted.
    assert {("create", "deployments"), ("patch", "memcacheds")} <= {
        (r.verb, r.resource.partition(".")[0]) for r in writes
    }
    assert any(r.subresource == "status" for r in writes)
    assert {(r.field_manager, r.user_agent) for r in writes} == {
        (OPERATOR_FIELD_MANAGER, OPERATOR_FIELD_MANAGER)
    }
