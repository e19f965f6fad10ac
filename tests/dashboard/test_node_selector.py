"""A Ptemplate's node selector set from the change form, and set back by a revert, on a real
API server (kubesim, or OPSBOARD_TEST_KUBECONFIG): the map is replaced whole, never merged
into the old one, though label keys hold dots that no dotted path can name."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from controllers.kube import ApiKube
from controllers.ptemplate.desired import PTEMPLATE
from opsboard.audit.models import AuditEntry
from opsboard.dashboard.history import cr_history
from opsboard.mirror.models import KubeObject
from tests.controllers.ptemplate_helpers import SPEC
from tests.dashboard.mirror_factory import mirror_as_watcher
from tests.support.review import hidden_fields, review

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}
FIRST = SPEC["nodeSelector"]  # {"node-role.kubernetes.io/worker": ""}
EMPTY = "&quot;&quot;"  # an empty label value, shown as "" (an absent one as —)


@pytest.fixture
def accel(cluster_kube: ApiKube, namespace: str) -> KubeObject:
    """A Ptemplate in the cluster, mirrored with its first version, as the watcher would."""
    body = cluster_kube.create(PTEMPLATE, {
        "apiVersion": PTEMPLATE.api_version, "kind": PTEMPLATE.kind,
        "metadata": {"name": "accel", "namespace": namespace}, "spec": SPEC,
    })  # fmt: skip
    return mirror_as_watcher(PTEMPLATE, body, "ADDED")


def _selector(kube: ApiKube, namespace: str) -> dict[str, str]:
    return dict(kube.get(PTEMPLATE, namespace, "accel")["spec"]["nodeSelector"])


def _row(path: str, old: str, new: str) -> str:
    return rf"{re.escape(path)}</td><td><del>{old}</del></td><td><ins>{new}<"


def test_the_form_replaces_the_selector_whole_and_its_revert_sets_the_old_one_back(
    operator_client: Client,
    admin_client_: Client,
    cluster_kube: ApiKube,
    namespace: str,
    accel: KubeObject,
) -> None:
    url = f"/k/ptemplate/{namespace}/accel/"
    form = {"image": SPEC["image"], "memory": "", "devices": str(SPEC["deviceCount"]),
            "node_selector": "kubernetes.io/os=linux, example.com/fpga=yes"}  # fmt: skip
    html, hidden = review(operator_client, url, form, **HX)
    # The dry run's answer, key by key: the old key goes, the new ones come.
    assert re.search(_row("spec.nodeSelector.node-role.kubernetes.io/worker", EMPTY, "—"), html)
    assert re.search(_row("spec.nodeSelector.kubernetes.io/os", "—", "linux"), html)
    assert re.search(_row("spec.nodeSelector.example.com/fpga", "—", "yes"), html)
    assert _selector(cluster_kube, namespace) == FIRST  # a dry run changes nothing

    html = operator_client.post(url + "patch/apply/", hidden, **HX).content.decode()
    wanted = {"kubernetes.io/os": "linux", "example.com/fpga": "yes"}
    assert _selector(cluster_kube, namespace) == wanted  # merged, the old key would stay
    applied = "<code>spec.nodeSelector</code> → <code>example.com/fpga=yes, kubernetes.io/os=linux"
    assert applied in html
    entry = AuditEntry.objects.get()
    assert (entry.result, entry.before, entry.after) == (
        "applied", {"spec.nodeSelector": FIRST}, {"spec.nodeSelector": wanted}
    )  # fmt: skip
    audit = admin_client_.get("/audit/").content.decode()
    assert "spec.nodeSelector=example.com/fpga=yes, kubernetes.io/os=linux" in audit

    # Not mirrored yet: the history has the change from its audit entry, label by label.
    [change, _] = cr_history(cr=accel)
    assert change.change == f"a{entry.pk}"
    assert ("spec.nodeSelector.example.com/fpga", None, "yes") in change.diff
    html = operator_client.post(f"{url}history/{change.change}/revert/", **HX).content.decode()
    assert re.search(_row("spec.nodeSelector.node-role.kubernetes.io/worker", "—", EMPTY), html)
    operator_client.post(url + "patch/apply/", hidden_fields(html), **HX)
    assert _selector(cluster_kube, namespace) == FIRST


def test_a_kubectl_edit_of_labels_with_dots_is_reverted_to_the_map_it_replaced(
    operator_client: Client,
    cluster_kube: ApiKube,
    kube_api_client: Any,
    namespace: str,
    accel: KubeObject,
) -> None:
    """A version's revert sets each changed field back; a label's key is no field of its
    own (its dots would read as a path: nodeSelector.node-role → kubernetes → io/worker)."""
    kubectl_edit = ApiKube(kube_api_client, field_manager="kubectl-edit")
    kubectl_edit.patch(PTEMPLATE, namespace, "accel", {"spec": {"nodeSelector": {
        "node-role.kubernetes.io/worker": "gpu", "topology.kubernetes.io/zone": "a",
    }}})  # fmt: skip
    mirror_as_watcher(PTEMPLATE, cluster_kube.get(PTEMPLATE, namespace, "accel"))
    url = f"/k/ptemplate/{namespace}/accel/"
    change = cr_history(cr=accel)[0]
    assert change.by == "kubectl-edit (field manager)"
    assert ("spec.nodeSelector.topology.kubernetes.io/zone", None, "a") in change.diff

    html = operator_client.post(f"{url}history/{change.change}/revert/", **HX).content.decode()
    assert "Revert the change to generation 2" in html
    assert re.search(_row("spec.nodeSelector.node-role.kubernetes.io/worker", "gpu", EMPTY), html)
    assert re.search(_row("spec.nodeSelector.topology.kubernetes.io/zone", "a", "—"), html)
    html = operator_client.post(url + "patch/apply/", hidden_fields(html), **HX).content.decode()
    assert "Applied:" in html, html
    assert _selector(cluster_kube, namespace) == FIRST
    entry = AuditEntry.objects.get()
    assert entry.after == {"spec.nodeSelector": FIRST} and entry.reverts_generation == 2
