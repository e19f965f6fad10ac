"""Impersonation (OPSBOARD_KUBE_IMPERSONATE=true): the dashboard calls the API server as the
person, so the cluster's RBAC decides. Someone whose Kubernetes group may read memcacheds
but not patch them sees the refusal explained before the form, is refused at every step,
and nothing changes. Needs an API server that enforces RBAC (a real cluster, or kubesim
once it does): elsewhere these tests skip, saying so."""

from __future__ import annotations

from html import unescape
from typing import Any

import pytest
from django.contrib.auth.models import User

from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from opsboard.accounts.kube_identity import KubeIdentity, kube_identity
from opsboard.accounts.models import SsoIdentity
from opsboard.accounts.roles import Role, role_assign
from opsboard.audit.models import AuditEntry
from tests.dashboard.cluster_fixtures import IMPERSONATION_SPEC, operator_in_group
from tests.support.review import review_and_apply

pytestmark = pytest.mark.django_db
SPEC = IMPERSONATION_SPEC


def test_a_group_without_patch_sees_the_refusal_explained_and_nothing_changes(
    impersonation_rbac: str, namespace: str, cluster_kube: ApiKube, settings: Any
) -> None:
    rbac = impersonation_rbac
    person = operator_in_group(settings, f"{namespace}-readers")
    refusal = 'The cluster\'s RBAC refuses: "rita" (groups {}-readers) may not patch {} (API '
    page = unescape(person.get(rbac).content.decode())
    assert refusal.format(namespace, "memcacheds") + "group cache.example.com) in namespace" in page
    assert 'name="size"' not in page  # before the form: no form
    # A size alone goes through the scale subresource: that is what the review asks.
    review = unescape(
        person.post(rbac + "patch/", {"size": 5, "image": SPEC["image"]}).content.decode()
    )
    assert refusal.format(namespace, "memcacheds/scale") in review and "dry run" not in review
    live = cluster_kube.get(MEMCACHED, namespace, "cache-a")
    forged = person.post(rbac + "patch/apply/", {
        "size": 5, "image": SPEC["image"],
        "resource_version": live["metadata"]["resourceVersion"],
    }).content.decode()  # fmt: skip
    assert 'User "rita" cannot patch resource "memcacheds/scale"' in unescape(forged)
    assert cluster_kube.get(MEMCACHED, namespace, "cache-a")["spec"]["size"] == 3
    entry = AuditEntry.objects.get()
    assert (entry.username, entry.result) == ("rita", "rejected")


def test_a_group_with_patch_changes_the_cr_as_that_person(
    impersonation_rbac: str, namespace: str, cluster_kube: ApiKube, settings: Any
) -> None:
    rbac = impersonation_rbac
    person = operator_in_group(settings, f"{namespace}-writers")
    assert 'name="size"' in person.get(rbac).content.decode()
    assert "Applied:" in review_and_apply(person, rbac, {"size": 5, "image": SPEC["image"]})
    assert cluster_kube.get(MEMCACHED, namespace, "cache-a")["spec"]["size"] == 5


def test_the_identity_carries_the_sso_groups_and_the_role_groups(settings: Any) -> None:
    settings.OPSBOARD_KUBE_IMPERSONATE = True
    settings.OPSBOARD_KUBE_IMPERSONATE_PREFIX = "oidc:"
    settings.OPSBOARD_KUBE_ROLE_GROUPS = {"viewer": ["opsboard-viewers"]}
    sam = User.objects.create_user("sam")
    role_assign(user=sam, role=Role.VIEWER)
    SsoIdentity.objects.create(user=sam, issuer="https://i", subject="s", groups=["team-a"])
    assert kube_identity(sam) == KubeIdentity("oidc:sam", ("oidc:team-a", "oidc:opsboard-viewers"))
    assert kube_identity(sam).headers()[0] == ("Impersonate-User", "oidc:sam")  # type: ignore[union-attr]
    settings.OPSBOARD_KUBE_IMPERSONATE = False
    assert kube_identity(sam) is None
