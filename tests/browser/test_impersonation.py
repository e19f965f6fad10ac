"""Impersonation in the browser, against an API server that enforces RBAC (the real control
plane through OPSBOARD_TEST_KUBECONFIG; elsewhere it skips, saying so): an operator whose
Kubernetes group may not patch memcacheds sees why, before any form, and a forged apply
changes nothing."""

from __future__ import annotations

from html import unescape

import pytest
from django.contrib.auth.models import User

from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from opsboard.accounts.roles import Role, role_assign
from tests.accounts.users import PASSWORD
from tests.browser.conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_group_without_patch_sees_the_refusal_explained_and_nothing_changes(
    page_as, impersonation_rbac: str, namespace: str, cluster_kube: ApiKube, settings
) -> None:
    settings.OPSBOARD_KUBE_ROLE_GROUPS = {"operator": [f"{namespace}-readers"]}
    rita = User.objects.create_user("rita", password=PASSWORD)
    role_assign(user=rita, role=Role.OPERATOR)
    page = page_as(rita)
    page.goto(page.url.rstrip("/") + impersonation_rbac)
    page.get_by_role("heading", name="Owner tree").wait_for()
    assert page.get_by_role("button", name="Review change").is_disabled()
    why = page.locator("[id^=cr-why-]").inner_text()
    assert f'"rita" (groups {namespace}-readers) may not patch memcacheds (API group cache.' in why
    assert f"in namespace {namespace}" in why and "RoleBinding" in why
    screenshot(page, "impersonation-refused")
    rv = cluster_kube.get(MEMCACHED, namespace, "cache-a")["metadata"]["resourceVersion"]
    answer = page.evaluate(
        """async (rv) => {
            const token = JSON.parse(document.body.getAttribute('hx-headers'))['X-CSRFToken'];
            const response = await fetch('patch/apply/', {method: 'POST',
                headers: {'X-CSRFToken': token, 'HX-Request': 'true',
                          'Content-Type': 'application/x-www-form-urlencoded'},
                body: 'size=9&image=memcached:1.4.36-alpine&resource_version=' + rv});
            return await response.text();
        }""",
        rv,
    )
    assert 'cannot patch resource "memcacheds/scale"' in unescape(answer)
    assert cluster_kube.get(MEMCACHED, namespace, "cache-a")["spec"]["size"] == 3
