"""With impersonation, the cluster's refusal at Apply (a binding removed after the review,
or a forged apply) says what was refused (the patch), whom the cluster saw and what to do;
its audit entry has the object's uid and before values; without htmx it is a 403."""

from __future__ import annotations

from html import unescape
from typing import Any

import pytest
from kubernetes import client

from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from opsboard.audit.models import AuditEntry
from tests.dashboard.cluster_fixtures import IMPERSONATION_SPEC, operator_in_group
from tests.fixtures.kubesim import KubesimHandle
from tests.support.review import review

pytestmark = pytest.mark.django_db
GRANT = "A cluster admin can grant it with a RoleBinding there (to memcached-editor-role"


def test_a_binding_removed_after_the_review_refuses_the_patch_and_says_what_to_do(
    impersonation_rbac: str, namespace: str, cluster_kube: ApiKube, kube_api_client: Any,
    settings: Any,
) -> None:  # fmt: skip
    url = impersonation_rbac
    person = operator_in_group(settings, f"{namespace}-writers")
    form = {"size": 5, "image": IMPERSONATION_SPEC["image"]}
    _, hidden = review(person, url, form, HTTP_HX_REQUEST="true")
    client.RbacAuthorizationV1Api(kube_api_client).delete_namespaced_role_binding(
        "memcached-writers", namespace
    )
    response = person.post(url + "patch/apply/", hidden, HTTP_HX_REQUEST="true")
    assert response.status_code == 200  # htmx swaps the panel, with the refusal in it
    panel = unescape(response.content.decode())
    assert (
        f'The cluster refused the patch; nothing was changed: "rita" (groups {namespace}-'
        f"writers) may not patch memcacheds/scale (API group cache.example.com) in namespace "
        f"{namespace}. {GRANT}"
    ) in panel
    assert "GET /apis" not in panel
    live = cluster_kube.get(MEMCACHED, namespace, "cache-a")
    assert live["spec"]["size"] == 3
    entry = AuditEntry.objects.get()
    assert (entry.result, entry.uid) == ("rejected", live["metadata"]["uid"])
    assert (entry.before, entry.after) == ({"spec.size": 3}, {"spec.size": 5})
    assert entry.message.startswith("The cluster refused the patch")


@pytest.mark.kubesim_only
def test_a_patch_an_admission_webhook_denies_is_told_in_its_words_with_no_grant_to_ask_for(
    impersonation_rbac: str, namespace: str, cluster_kube: ApiKube, settings: Any,
    kubesim_server: KubesimHandle,
) -> None:  # fmt: skip
    """A 403 that RBAC did not give (a webhook's, a policy's): no RoleBinding would help, so
    the panel says what refused it, as the API server said it, not a grant to ask for."""
    url = impersonation_rbac
    person = operator_in_group(settings, f"{namespace}-writers")
    _, hidden = review(person, url, {"size": 5, "image": IMPERSONATION_SPEC["image"]},
                       HTTP_HX_REQUEST="true")  # fmt: skip
    said = (
        'admission webhook "validation.gatekeeper.sh" denied the request: '
        "[max-size] spec.size 5 is above this namespace's limit of 4"
    )
    denial = kubesim_server.add_error(
        403, verb="patch", resource="memcacheds", namespace=namespace, count=1, message=said
    )
    response = person.post(url + "patch/apply/", hidden, HTTP_HX_REQUEST="true")
    panel = unescape(response.content.decode())
    assert denial.hits == 1
    assert "The cluster refused the change, and nothing was changed: an admission check" in panel
    assert "not a want of rights" in panel and "It said: PATCH " in panel
    assert f"403 {said}" in panel
    assert GRANT not in panel and "may not patch" not in panel
    assert cluster_kube.get(MEMCACHED, namespace, "cache-a")["spec"]["size"] == 3
    entry = AuditEntry.objects.get()
    assert entry.result == "rejected" and said in entry.message


def test_a_forged_apply_without_htmx_is_a_403_naming_the_patch_refused(
    impersonation_rbac: str, namespace: str, cluster_kube: ApiKube, settings: Any
) -> None:
    url = impersonation_rbac
    person = operator_in_group(settings, f"{namespace}-readers")
    live = cluster_kube.get(MEMCACHED, namespace, "cache-a")
    response = person.post(url + "patch/apply/", {
        "size": 3, "image": "memcached:1.6.21-alpine",
        "resource_version": live["metadata"]["resourceVersion"],
    })  # fmt: skip
    assert response.status_code == 403
    page = unescape(response.content.decode())
    assert (
        f"may not patch memcacheds (API group cache.example.com) in namespace {namespace}" in page
    )
    assert GRANT in page
    entry = AuditEntry.objects.get()
    assert (entry.uid, entry.before) == (
        live["metadata"]["uid"],
        {"spec.image": IMPERSONATION_SPEC["image"]},
    )
    assert cluster_kube.get(MEMCACHED, namespace, "cache-a")["spec"] == live["spec"]
