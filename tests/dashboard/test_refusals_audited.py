"""opsboard's own refusals of a change are audited: a forged POST to review, apply or
reconcile by a viewer is a 403 that says why, and a rejected entry naming who tried what."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from opsboard.accounts.roles import Role, grant_assign
from opsboard.audit.models import AuditEntry
from opsboard.mirror.models import KubeObject
from tests.dashboard.mirror_factory import MEMCACHED_API, mirror_object

pytestmark = pytest.mark.django_db
CR = "/k/memcached/team-b/cache-a/"


@pytest.fixture
def cache_a() -> KubeObject:
    return mirror_object("Memcached", "cache-a", namespace="team-b", api_version=MEMCACHED_API)


@pytest.fixture
def tina() -> Client:
    user = User.objects.create_user("tina")
    grant_assign(user=user, namespace="team-b", role=Role.VIEWER)
    grant_assign(user=user, namespace="team-a", role=Role.OPERATOR)
    person = Client()
    person.force_login(user)
    return person


@pytest.mark.parametrize(
    ("step", "action"),
    [("patch/", "patch"), ("patch/apply/", "patch"), ("reconcile/", "reconcile"),
     ("history/7/revert/", "patch")],
)  # fmt: skip
def test_a_forged_change_by_a_viewer_is_a_403_and_a_rejected_entry(
    tina: Client, cache_a: KubeObject, step: str, action: str
) -> None:
    response = tina.post(CR + step, {"size": 9, "resource_version": "1"})
    assert response.status_code == 403
    assert "needs operator in team-b; you are viewer" in response.content.decode()
    entry = AuditEntry.objects.get()
    assert (entry.username, entry.action, entry.result) == ("tina", action, "rejected")
    assert (entry.controller, entry.namespace, entry.name) == ("memcached", "team-b", "cache-a")
    assert entry.uid == cache_a.uid
    assert "Refused by opsboard" in entry.message and "needs operator in team-b" in entry.message


def test_a_forged_change_of_no_cr_is_refused_alike_and_not_audited(tina: Client) -> None:
    """Else a viewer could fill the audit with entries naming objects that do not exist."""
    response = tina.post("/k/memcached/team-b/no-such-cr/patch/apply/", {"size": 9})
    assert response.status_code == 403
    assert not AuditEntry.objects.exists()


def test_a_namespace_without_a_role_stays_a_404_and_is_not_audited(tina: Client) -> None:
    assert tina.post("/k/memcached/team-c/cache-a/patch/apply/", {}).status_code == 404
    assert not AuditEntry.objects.exists()
