"""The change history: spec versions kept by the watcher, diffs with their authors, a
reviewed revert audited as such, and a refused apply explained."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from controllers.kube import OPERATOR_FIELD_MANAGER, ApiKube
from controllers.memcached.desired import MEMCACHED
from opsboard.audit.models import AuditEntry
from opsboard.dashboard.history import cr_history
from opsboard.mirror.history import changed_by, spec_versions_record
from opsboard.mirror.models import KubeObject, SpecVersion
from opsboard.mirror.writer import mirror_apply, spec_writers
from tests.dashboard.mirror_factory import MEMCACHED_API, mirror_as_watcher
from tests.support.review import hidden_fields

pytestmark = pytest.mark.django_db


def _body(
    generation: int, spec: dict[str, Any], *, managers: list[Any] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": MEMCACHED_API, "kind": "Memcached",
        "metadata": {"name": "m", "namespace": "ns", "uid": "u-1", "generation": generation,
                     "resourceVersion": str(20 * generation), "managedFields": managers or []},
        "spec": spec,
    }  # fmt: skip


def test_the_watcher_keeps_a_version_per_generation_with_its_field_manager() -> None:
    managers = [
        {"manager": "opsboard", "operation": "Update", "time": "2026-11-23T10:00:00Z",
         "fieldsV1": {"f:spec": {"f:size": {}}}},
        {"manager": "kubectl-edit", "operation": "Update", "time": "2026-11-23T11:00:00Z",
         "fieldsV1": {"f:spec": {"f:image": {}}}},
        {"manager": "memcached-operator", "operation": "Update", "time": "2026-11-23T12:00:00Z",
         "subresource": "status", "fieldsV1": {"f:status": {}}},
    ]  # fmt: skip
    assert changed_by(spec_writers(_body(2, {}, managers=managers)), None, {}) == "kubectl-edit"
    first = mirror_apply(kind=MEMCACHED, events=[("ADDED", _body(1, {"size": 1}))])
    assert spec_versions_record(first) == 1
    status_only = _body(1, {"size": 1})
    status_only["metadata"]["resourceVersion"] = "25"
    assert (
        spec_versions_record(mirror_apply(kind=MEMCACHED, events=[("MODIFIED", status_only)])) == 0
    )
    changed = mirror_apply(
        kind=MEMCACHED,
        events=[("MODIFIED", _body(2, {"size": 1, "image": "x:2"}, managers=managers))],
    )
    assert spec_versions_record(changed) == 1
    versions = list(SpecVersion.objects.order_by("generation").values_list("generation", "manager"))
    assert versions == [(1, ""), (2, "kubectl-edit")]

    cr = KubeObject.objects.get(uid="u-1")
    history = cr_history(cr=cr)
    assert [h.generation for h in history] == [2, 1]
    assert history[0].diff == [("spec.image", None, "x:2")]
    assert history[0].by == "kubectl-edit (field manager)" and not history[0].through_opsboard
    assert history[1].first


@pytest.fixture
def cache(cluster_kube: ApiKube, namespace: str) -> KubeObject:
    """A Memcached in the cluster, mirrored with its first version, as the watcher would."""
    body = cluster_kube.create(MEMCACHED, {
        "apiVersion": MEMCACHED_API, "kind": "Memcached",
        "metadata": {"name": "cache", "namespace": namespace},
        "spec": {"size": 2, "image": "memcached:1.6"},
    })  # fmt: skip
    return mirror_as_watcher(MEMCACHED, body, "ADDED")


def _mirror(kube: ApiKube, namespace: str) -> None:
    """What the watcher does on the next event."""
    mirror_as_watcher(MEMCACHED, kube.get(MEMCACHED, namespace, "cache"))


def test_a_change_made_with_kubectl_is_reverted_through_the_review(
    operator_client: Client,
    cluster_kube: ApiKube,
    kube_api_client: Any,
    namespace: str,
    cache: KubeObject,
) -> None:
    kubectl_edit = ApiKube(kube_api_client, field_manager="kubectl-edit")
    kubectl_edit.patch(
        MEMCACHED, namespace, "cache", {"spec": {"image": "memcached:nope", "size": 3}}
    )
    _mirror(cluster_kube, namespace)
    url = f"/k/memcached/{namespace}/cache/"
    change = cr_history(cr=cache)[0]
    assert change.generation == 2 and not change.through_opsboard
    # The API server (kubesim too) names the writer in managedFields.
    assert change.by == "kubectl-edit (field manager)"
    page = operator_client.get(url).content.decode()
    assert 'id="history"' in page and "kubectl-edit (field manager)" in page

    html = operator_client.post(f"{url}history/{change.change}/revert/",
                                HTTP_HX_REQUEST="true").content.decode()  # fmt: skip
    assert "Revert the change to generation 2" in html
    assert re.search(
        r"spec\.image</td><td><del>memcached:nope</del></td><td><ins>memcached:1\.6<", html
    )
    assert cluster_kube.get(MEMCACHED, namespace, "cache")["spec"]["image"] == "memcached:nope"

    html = operator_client.post(
        url + "patch/apply/", hidden_fields(html), HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Applied:" in html
    live = cluster_kube.get(MEMCACHED, namespace, "cache")["spec"]
    assert (live["image"], live["size"]) == ("memcached:1.6", 2)
    entry = AuditEntry.objects.get()
    assert entry.reverts is None and entry.reverts_generation == 2
    assert entry.after == {"spec.image": "memcached:1.6", "spec.size": 2}
    assert entry.message.startswith("Revert of the change to generation 2.")


# managedFields as kube-apiserver v1.28 leaves them after `kubectl apply`, then `kubectl
# scale` (its /scale entry has no time, and it took f:size from the apply's entry).
APPLIED_THEN_SCALED = [
    {"manager": "kubectl", "operation": "Update", "subresource": "scale",
     "fieldsV1": {"f:spec": {"f:size": {}}}},
    {"manager": "kubectl-client-side-apply", "operation": "Update", "time": "2026-11-29T14:23:50Z",
     "fieldsV1": {"f:spec": {".": {}, "f:image": {}, "f:nodeSelector": {}}}},
    {"manager": "memcached-operator", "operation": "Update", "time": "2026-11-29T14:24:00Z",
     "subresource": "status", "fieldsV1": {"f:status": {"f:nodes": {}}}},
]  # fmt: skip


def test_a_change_is_credited_to_the_owner_of_the_fields_it_changed() -> None:
    writers = spec_writers(_body(3, {}, managers=APPLIED_THEN_SCALED))
    assert [w.manager for w in writers] == ["kubectl", "kubectl-client-side-apply"]
    size, image = {"size": 3, "image": "m:1"}, {"size": 3, "image": "m:2"}
    assert changed_by(writers, {"size": 1, "image": "m:1"}, size) == "kubectl"
    assert changed_by(writers, size, image) == "kubectl-client-side-apply"
    # An atomic value (a whole map owned) covers the keys below it, dots and all.
    selector = {**image, "nodeSelector": {"kubernetes.io/os": "linux"}}
    assert changed_by(writers, image, selector) == "kubectl-client-side-apply"
    # But one that holds the key itself changed it: the map's holder only created the map
    # (its Update kept f:nodeSelector when the key was taken from it).
    edit = {"manager": "kubectl-edit", "operation": "Update", "time": "2026-11-29T14:25:00Z",
            "fieldsV1": {"f:spec": {"f:nodeSelector": {"f:kubernetes.io/os": {}}}}}  # fmt: skip
    edited = spec_writers(_body(4, {}, managers=[*APPLIED_THEN_SCALED, edit]))
    assert changed_by(edited, image, selector) == "kubectl-edit"
    # No earlier spec to compare: the latest writer by time (the /scale one has none).
    assert changed_by(writers, None, image) == "kubectl-client-side-apply"


def test_the_history_credits_a_scale_to_its_writer_not_the_latest_timed_one() -> None:
    spec_versions_record(
        mirror_apply(kind=MEMCACHED, events=[("ADDED", _body(1, {"size": 1, "image": "m:1"}))])
    )
    spec_versions_record(
        mirror_apply(kind=MEMCACHED, events=[("MODIFIED", _body(
            2, {"size": 3, "image": "m:1"}, managers=APPLIED_THEN_SCALED))])
    )  # fmt: skip
    versions = dict(SpecVersion.objects.values_list("generation", "manager"))
    assert versions[2] == "kubectl"


def test_a_revert_names_only_changes_of_this_object(
    operator_client: Client, cluster_kube: ApiKube, namespace: str, cache: KubeObject
) -> None:
    other = SpecVersion.objects.create(uid="someone-else", api_version=MEMCACHED_API,
                                       kind="Memcached", name="x", generation=2, seen_at=cache.mirrored_at)  # fmt: skip
    url = f"/k/memcached/{namespace}/cache/history/"
    for change in (f"v{other.pk}", "a999", "zzz"):
        assert operator_client.post(f"{url}{change}/revert/").status_code == 404, change


def test_a_viewer_cannot_revert(viewer_client: Client, namespace: str, cache: KubeObject) -> None:
    response = viewer_client.post(f"/k/memcached/{namespace}/cache/history/v1/revert/")
    assert response.status_code == 403


def test_a_refused_apply_says_what_changed_meanwhile_and_reviews_again(
    operator_client: Client, cluster_kube: ApiKube, namespace: str, cache: KubeObject
) -> None:
    url = f"/k/memcached/{namespace}/cache/"
    html = operator_client.post(url + "patch/", {"size": "5", "image": "memcached:1.6"},
                                HTTP_HX_REQUEST="true").content.decode()  # fmt: skip
    reviewed = hidden_fields(html)
    assert reviewed["reviewed"] == "spec.size" and reviewed["reviewed_generation"] == "1"
    cluster_kube.patch(MEMCACHED, namespace, "cache", {"spec": {"image": "memcached:1.6.21"}})
    _mirror(cluster_kube, namespace)

    html = operator_client.post(
        url + "patch/apply/", reviewed, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Not applied: the object changed since your review" in html
    conflict = html[html.index("cr-conflict-") : html.index("Below, a new review")]
    assert re.search(
        r"spec\.image</td><td><del>memcached:1\.6</del></td><td><ins>memcached:1\.6\.21<", conflict
    )
    # The API server names the other writer's field manager (the operators' ApiKube's).
    assert f"generation 2: {OPERATOR_FIELD_MANAGER} (field manager)" in conflict
    # The new review sends the person's size only: the other person's image stays.
    again = hidden_fields(html)
    assert again["reviewed"] == "spec.size" and again["reviewed_generation"] == "2"
    html = operator_client.post(
        url + "patch/apply/", again, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Applied:" in html
    live = cluster_kube.get(MEMCACHED, namespace, "cache")["spec"]
    assert (live["size"], live["image"]) == (5, "memcached:1.6.21")
