"""A CRD opsboard runs no operator for, named in OPSBOARD_GENERIC_KINDS: the watcher mirrors
it, the dashboard lists it, and its size (the CRD's specReplicasPath) is changed through
the scale subresource with the usual review and guarded apply."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from controllers.base import Kind
from controllers.kube import ApiKube, Conflict
from opsboard.audit.models import AuditEntry
from opsboard.dashboard.kinds import all_kinds
from opsboard.mirror.models import KubeObject
from tests.dashboard.mirror_factory import mirror_object
from tests.fixtures.celery import EngineProcesses
from tests.support.review import hidden_fields
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)
NAME = "gadgets.generic.opsboard.dev"
GADGET = Kind("generic.opsboard.dev", "v1", "Gadget", "gadgets")
CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": NAME},
    "spec": {
        "group": GADGET.group, "scope": "Namespaced",
        "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "subresources": {"status": {}, "scale": {
                "specReplicasPath": ".spec.count", "statusReplicasPath": ".status.count"}},
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    "count": {"type": "integer", "minimum": 0, "maximum": 20}}},
                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}},
        }],
    },
}  # fmt: skip


@pytest.fixture
def generic(cluster_kube: ApiKube, settings: Any) -> Iterator[None]:
    with contextlib.suppress(Conflict):
        cluster_kube.request(
            "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body=CRD
        )
    wait_for(lambda: _served(cluster_kube), what="the Gadget CRD served")
    settings.OPSBOARD_GENERIC_KINDS = [NAME]
    all_kinds.cache_clear()
    yield
    all_kinds.cache_clear()


def _served(kube: ApiKube) -> bool:
    try:
        kube.list(GADGET, "default")
    except Exception:
        return False
    return True


def test_a_generic_kind_is_listed_and_scaled_through_its_scale_subresource(
    engine: EngineProcesses, generic: None, cluster_kube: ApiKube, namespace: str,
    operator_client: Client,
) -> None:  # fmt: skip
    engine.extra_env["OPSBOARD_GENERIC_KINDS"] = NAME
    engine.extra_env["OPSBOARD_WATCH_NAMESPACES"] = namespace  # a cluster may be shared
    engine.start_watcher()
    cluster_kube.create(GADGET, {
        "apiVersion": GADGET.api_version, "kind": "Gadget",
        "metadata": {"name": "g-1", "namespace": namespace}, "spec": {"count": 2},
    })  # fmt: skip
    wait_for(
        lambda: KubeObject.objects.filter(kind="Gadget", namespace=namespace, name="g-1").exists(),
        timeout=30, what="the Gadget mirrored",
    )  # fmt: skip
    info = all_kinds()["gadgets"]
    assert info.generic and info.replicas_path == "spec.count"

    listing = operator_client.get(f"/k/gadgets/?namespace={namespace}")
    assert [row.cr.name for row in listing.context["page"]] == ["g-1"]
    url = f"/k/gadgets/{namespace}/g-1/"
    detail = operator_client.get(url).content.decode()
    assert 'name="size"' in detail and "Reconcile now" not in detail

    html = operator_client.post(
        url + "patch/", {"size": "5"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "through the <code>/scale</code> subresource" in html
    assert re.search(r"spec\.count</td><td><del>2</del></td><td><ins>5</ins>", html)
    hidden = hidden_fields(html)
    html = operator_client.post(
        url + "patch/apply/", hidden, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Applied:" in html
    assert cluster_kube.get(GADGET, namespace, "g-1")["spec"]["count"] == 5
    entry = AuditEntry.objects.get()
    assert entry.message.startswith("Scaled through /scale") and entry.after == {"spec.count": 5}


@pytest.fixture
def generic_mirrored(settings: Any) -> Iterator[None]:
    """The Gadget kind known from its CRD as the watcher mirrors it, with no cluster."""
    mirror_object("CustomResourceDefinition", NAME, api_version="apiextensions.k8s.io/v1",
                  spec=CRD["spec"])  # fmt: skip
    settings.OPSBOARD_GENERIC_KINDS = [NAME]
    all_kinds.cache_clear()
    yield
    all_kinds.cache_clear()


def test_a_generic_kind_needs_attention_only_when_degraded(
    generic_mirrored: None, operator_client: Client
) -> None:
    """Its status is not ours: most say nothing of availability, which is no reason to call
    a person; a Degraded condition is."""
    for name, conditions in (("quiet", []), ("broken", [{"type": "Degraded", "status": "True"}])):
        mirror_object("Gadget", name, api_version=GADGET.api_version,
                      status={"conditions": conditions},
                      health="Degraded" if conditions else "Unknown")  # fmt: skip
    attention = operator_client.get("/").context["attention"]
    assert [a.cr.name for a in attention] == ["broken"]


def test_the_audit_says_no_run_observes_a_generic_kinds_change(
    generic_mirrored: None, admin_client_: Client
) -> None:
    gadget = all_kinds()[next(n for n, i in all_kinds().items() if i.generic)]
    AuditEntry.objects.create(
        username="otto", action="patch", controller=gadget.name, kind="Gadget",
        namespace="default", name="g", uid="u-g", before={"spec.count": 1},
        after={"spec.count": 2}, result="applied", generation=2,
    )  # fmt: skip
    html = admin_client_.get("/audit/").content.decode()
    assert "no opsboard operator runs for this kind" in html and "not yet" not in html
