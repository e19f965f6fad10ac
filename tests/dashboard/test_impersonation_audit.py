"""With impersonation, the audit says who the API server saw: the prefixed user and groups
the change was sent as, on the audit page and in the CSV, beside the opsboard name."""

from __future__ import annotations

import csv
import io
from html import unescape
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from kubernetes import client

from opsboard.accounts.models import SsoIdentity
from opsboard.accounts.roles import Role, grant_assign
from opsboard.audit.models import AuditEntry
from tests.support.review import review_and_apply

pytestmark = pytest.mark.django_db
FORM = {"size": 4, "image": "memcached:1.4.36-alpine"}  # the patch form as posted


def _bind(kube_api_client: Any, namespace: str, group: str, role: str) -> None:
    client.RbacAuthorizationV1Api(kube_api_client).create_namespaced_role_binding(namespace, {
        "metadata": {"name": f"{role}-prefixed"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}],
    })  # fmt: skip


def test_an_impersonated_change_records_the_user_and_groups_the_cluster_saw(
    impersonation_rbac: str, namespace: str, kube_api_client: Any, settings: Any,
    admin_client_: Client,
) -> None:  # fmt: skip
    settings.OPSBOARD_KUBE_IMPERSONATE_PREFIX = "oidc:"
    writers = f"oidc:{namespace}-writers"
    _bind(kube_api_client, namespace, writers, "memcached-writers")
    tina = User.objects.create_user("tina")
    grant_assign(user=tina, namespace=namespace, role=Role.OPERATOR)
    SsoIdentity.objects.create(
        user=tina, issuer="https://idp", subject="t", groups=[f"{namespace}-writers", "staff"]
    )
    person = Client()
    person.force_login(tina)
    url = impersonation_rbac
    assert "Applied:" in review_and_apply(person, url, FORM)

    entry = AuditEntry.objects.get()
    assert (entry.username, entry.result) == ("tina", "applied")
    assert (entry.kube_user, entry.kube_groups) == ("oidc:tina", [writers, "oidc:staff"])
    page = unescape(admin_client_.get("/audit/").content.decode())
    assert f"to the cluster: oidc:tina (groups {writers}, oidc:staff)" in page
    export = admin_client_.get("/audit/export.csv")
    (row,) = csv.DictReader(io.StringIO(b"".join(export.streaming_content).decode()))
    assert (row["username"], row["kube_user"]) == ("tina", "oidc:tina")
    assert row["kube_groups"] == f'["{writers}", "oidc:staff"]'


def test_without_impersonation_the_entry_names_no_cluster_identity(
    impersonation_rbac: str, namespace: str, settings: Any, operator_client: Client
) -> None:
    settings.OPSBOARD_KUBE_IMPERSONATE = False
    url = impersonation_rbac
    assert "Applied:" in review_and_apply(operator_client, url, FORM)
    entry = AuditEntry.objects.get()
    assert (entry.kube_user, entry.kube_groups) == ("", [])
