"""The patch flow against a real API server (kubesim, or OPSBOARD_TEST_KUBECONFIG): a
server-side dry run for the review, then a merge patch conditioned on the reviewed
resourceVersion, audited whatever happens."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from kubernetes import client

from controllers.base import Body
from controllers.bookstore.desired import BOOKSTORE
from controllers.kube import ApiKube, context_in_use
from controllers.memcached.desired import MEMCACHED
from controllers.ptemplate.desired import PTEMPLATE
from controllers.webserver.desired import WEBSERVER
from opsboard.audit.models import AuditEntry
from opsboard.mirror.models import KubeObject
from tests.controllers.ptemplate_helpers import SPEC as PTEMPLATE_SPEC
from tests.dashboard.cluster_fixtures import bookstore_with_a_claim
from tests.dashboard.mirror_factory import MEMCACHED_API, mirror_object
from tests.kubesim.identities import (
    cluster_objects,
    kubeconfig_with_token,
    service_account_token,
    unique,
)
from tests.support.review import hidden_fields, review

pytestmark = pytest.mark.django_db


def _create_cache_a(kube: ApiKube, namespace: str) -> Body:
    """A Memcached of size 3 in the cluster, and its row in the mirror (as the watcher would)."""
    created = kube.create(MEMCACHED, {
        "apiVersion": MEMCACHED_API, "kind": "Memcached",
        "metadata": {"name": "cache-a", "namespace": namespace},
        "spec": {"size": 3, "image": "memcached:1.4.36-alpine"},
    })  # fmt: skip
    mirror_object("Memcached", "cache-a", namespace=namespace, api_version=MEMCACHED_API,
                  spec={"size": 3, "image": "memcached:1.4.36-alpine"})  # fmt: skip
    return created


@pytest.fixture
def cache_a(cluster_kube: ApiKube, namespace: str) -> str:
    _create_cache_a(cluster_kube, namespace)
    return f"/k/memcached/{namespace}/cache-a/"


def _size(kube: ApiKube, namespace: str) -> int:
    return kube.get(MEMCACHED, namespace, "cache-a")["spec"]["size"]


def _review(client: Client, url: str, size: str = "5") -> tuple[str, dict[str, str]]:
    html = client.post(url + "patch/", {"size": size, "image": "memcached:1.4.36-alpine"},
                       HTTP_HX_REQUEST="true").content.decode()  # fmt: skip
    return html, hidden_fields(html)


def test_review_shows_the_dry_run_diff_and_changes_nothing(
    operator_client: Client, cluster_kube: ApiKube, namespace: str, cache_a: str, settings: Any
) -> None:
    html, hidden = _review(operator_client, cache_a)
    host = cluster_kube.api.configuration.host
    context = context_in_use(str(settings.KUBECONFIG))  # the kubeconfig's current-context
    assert (
        f'The API server of cluster <strong>{context}</strong> (<span class="mono">{host}'
        "</span>) accepted this change in a dry run"
    ) in html
    assert re.search(r"spec\.size</td><td><del>3</del></td><td><ins>5</ins>", html)
    assert hidden["resource_version"] == cluster_kube.get(MEMCACHED, namespace, "cache-a")[
        "metadata"]["resourceVersion"]  # fmt: skip
    assert _size(cluster_kube, namespace) == 3
    assert not AuditEntry.objects.exists()


def test_apply_patches_the_reviewed_version_and_audits_it(
    operator_client: Client, cluster_kube: ApiKube, namespace: str, cache_a: str
) -> None:
    _, hidden = _review(operator_client, cache_a)
    html = operator_client.post(cache_a + "patch/apply/", hidden,
                                HTTP_HX_REQUEST="true").content.decode()  # fmt: skip
    assert "Applied:" in html
    live = cluster_kube.get(MEMCACHED, namespace, "cache-a")
    assert live["spec"]["size"] == 5
    entry = AuditEntry.objects.get()
    assert (entry.username, entry.action, entry.result) == ("otto", "patch", "applied")
    assert entry.before == {"spec.size": 3}
    assert entry.after == {"spec.size": 5}  # only what changed
    assert entry.generation == live["metadata"]["generation"]
    assert entry.uid == live["metadata"]["uid"]


def test_a_concurrent_change_asks_to_review_again_and_overwrites_nothing(
    operator_client: Client, cluster_kube: ApiKube, namespace: str, cache_a: str
) -> None:
    _, hidden = _review(operator_client, cache_a)
    cluster_kube.patch(MEMCACHED, namespace, "cache-a", {"spec": {"size": 4}})  # someone else
    html = operator_client.post(cache_a + "patch/apply/", hidden,
                                HTTP_HX_REQUEST="true").content.decode()  # fmt: skip
    assert "Not applied: the object changed since your review" in html
    # A new review: the person's size on top of the object as it is now.
    assert re.search(r"spec\.size</td><td><del>4</del></td><td><ins>5</ins>", html)
    assert _size(cluster_kube, namespace) == 4
    entry = AuditEntry.objects.get()
    assert entry.result == "rejected" and "changed since you looked at it" in entry.message


@pytest.mark.kubesim_only
def test_a_failing_cluster_is_reported_and_audited(
    operator_client: Client, cluster_kube: ApiKube, namespace: str, cache_a: str,
    kubesim_server,
) -> None:  # fmt: skip
    _, hidden = _review(operator_client, cache_a)
    kubesim_server.add_error(503, verb="patch", namespace=namespace)
    html = operator_client.post(cache_a + "patch/apply/", hidden,
                                HTTP_HX_REQUEST="true").content.decode()  # fmt: skip
    assert "The cluster is unreachable or failing; nothing was changed" in html
    kubesim_server.clear_faults()
    assert _size(cluster_kube, namespace) == 3
    assert AuditEntry.objects.get().result == "failed"


def test_a_cluster_that_is_down_is_reported(
    operator_client: Client, namespace: str, cache_a: str, settings, tmp_path: Path
) -> None:
    kubeconfig = Path(settings.KUBECONFIG).read_text()
    dead = tmp_path / "kubeconfig"  # same cluster entry, a port nobody listens on
    dead.write_text(re.sub(r"server: \S+", "server: http://127.0.0.1:9", kubeconfig))
    settings.KUBECONFIG = str(dead)
    html, _ = _review(operator_client, cache_a)
    assert "The cluster is unreachable or failing; nothing was changed" in html
    assert 'role="alert"' in html


def test_an_applied_patch_tells_the_live_sections_to_refresh(
    operator_client: Client, cluster_kube: ApiKube, namespace: str, cache_a: str
) -> None:
    _, hidden = _review(operator_client, cache_a)
    response = operator_client.post(cache_a + "patch/apply/", hidden, HTTP_HX_REQUEST="true")
    assert response["HX-Trigger"] == "cr-changed"
    live = operator_client.get(cache_a).content.decode()
    assert "cr-changed from:body" in live


@pytest.mark.kubesim_only
def test_a_size_change_alone_goes_through_the_scale_subresource(
    operator_client: Client, cluster_kube: ApiKube, namespace: str, cache_a: str,
    kubesim_server,
) -> None:  # fmt: skip
    kubesim_server.clear_request_log()
    html, hidden = _review(operator_client, cache_a, size="4")
    assert "through the <code>/scale</code> subresource" in html
    assert _size(cluster_kube, namespace) == 3  # the dry run changed nothing
    operator_client.post(cache_a + "patch/apply/", hidden, HTTP_HX_REQUEST="true")
    assert _size(cluster_kube, namespace) == 4
    patches = [
        r for r in kubesim_server.request_log() if r.verb == "patch" and r.namespace == namespace
    ]
    assert [(r.resource, r.subresource) for r in patches] == [
        ("memcacheds.cache.example.com", "scale")
    ] * 2
    entry = AuditEntry.objects.get()
    assert entry.message == f"Scaled through /scale to generation {entry.generation}"
    assert entry.after == {"spec.size": 4} and entry.before == {"spec.size": 3}


def _deleted_since_the_review(kube: ApiKube, namespace: str) -> str:
    """Deletes cache-a in the cluster and, as the watcher does, in the mirror; returns its
    uid, which the page sends with every request (hx-vals)."""
    uid = KubeObject.objects.get(namespace=namespace, name="cache-a").uid
    kube.delete(MEMCACHED, namespace, "cache-a")
    KubeObject.objects.filter(uid=uid).delete()
    return uid


def test_apply_on_a_cr_deleted_since_the_review_is_refused_and_audited(
    operator_client: Client, cluster_kube: ApiKube, namespace: str, cache_a: str
) -> None:
    _, hidden = _review(operator_client, cache_a)
    uid = _deleted_since_the_review(cluster_kube, namespace)
    response = operator_client.post(cache_a + "patch/apply/", {**hidden, "uid": uid},
                                    HTTP_HX_REQUEST="true")  # fmt: skip
    assert response.status_code == 200  # htmx swaps it
    assert response["HX-Retarget"] == f"#cr-live-{uid}"  # in place of the live sections
    refusal = (
        f"Memcached {namespace}/cache-a no longer exists: it was deleted since you opened "
        "this page; nothing was changed."
    )
    assert refusal in response.content.decode()
    entry = AuditEntry.objects.get()
    assert (entry.action, entry.result, entry.uid) == ("patch", "rejected", uid)
    assert "no longer exists" in entry.message


def test_a_review_or_reconcile_on_a_deleted_cr_is_refused(
    operator_client: Client, cluster_kube: ApiKube, namespace: str, cache_a: str
) -> None:
    uid = _deleted_since_the_review(cluster_kube, namespace)
    page = {"uid": uid}
    review = operator_client.post(cache_a + "patch/", {"size": "5", **page},
                                  HTTP_HX_REQUEST="true").content.decode()  # fmt: skip
    assert "no longer exists: it was deleted since you opened this page" in review
    assert not AuditEntry.objects.exists()  # a review is not audited, refused or not

    reconcile = operator_client.post(cache_a + "reconcile/", page, HTTP_HX_REQUEST="true")
    assert "no longer exists" in reconcile.content.decode()
    entry = AuditEntry.objects.get()  # not queued: that would be an "applied" entry
    assert (entry.action, entry.result, entry.uid) == ("reconcile", "rejected", uid)


def test_nothing_is_sent_for_a_cr_deleted_and_created_again_since_the_review(
    operator_client: Client, cluster_kube: ApiKube, namespace: str, cache_a: str
) -> None:
    _, hidden = _review(operator_client, cache_a)
    uid = _deleted_since_the_review(cluster_kube, namespace)
    again = _create_cache_a(cluster_kube, namespace)  # by GitOps, say
    html = operator_client.post(cache_a + "patch/apply/", {**hidden, "uid": uid},
                                HTTP_HX_REQUEST="true").content.decode()  # fmt: skip
    assert "no longer exists" in html and "Another Memcached of that name exists now" in html
    now = cluster_kube.get(MEMCACHED, namespace, "cache-a")
    assert now["metadata"]["resourceVersion"] == again["metadata"]["resourceVersion"]
    assert AuditEntry.objects.get().result == "rejected"


def test_apply_on_a_cr_deleted_before_the_mirror_saw_it_says_so(
    operator_client: Client, cluster_kube: ApiKube, namespace: str, cache_a: str
) -> None:
    _, hidden = _review(operator_client, cache_a)
    cluster_kube.delete(MEMCACHED, namespace, "cache-a")  # the mirror still has it
    html = operator_client.post(cache_a + "patch/apply/", hidden,
                                HTTP_HX_REQUEST="true").content.decode()  # fmt: skip
    refusal = f"Memcached {namespace}/cache-a no longer exists: it was deleted since you opened"
    assert refusal in html
    entry = AuditEntry.objects.get()
    assert entry.result == "rejected" and entry.message.startswith(refusal)


def _memory_change(client: Client, url: str, memory: str) -> str:
    form = {"size": "3", "image": "memcached:1.4.36-alpine", "memory": memory}
    html = client.post(url + "patch/", form, HTTP_HX_REQUEST="true").content.decode()
    applied = client.post(url + "patch/apply/", hidden_fields(html), HTTP_HX_REQUEST="true")
    return html + applied.content.decode()


def test_a_memory_limit_is_reviewed_applied_audited_and_removed(
    operator_client: Client, cluster_kube: ApiKube, namespace: str, cache_a: str
) -> None:
    html = _memory_change(operator_client, cache_a, "128Mi")
    assert re.search(
        r"spec\.resources\.limits\.memory</td><td><del>—</del></td><td><ins>128Mi<", html
    )
    live = cluster_kube.get(MEMCACHED, namespace, "cache-a")
    assert live["spec"]["resources"] == {"limits": {"memory": "128Mi"}}
    entry = AuditEntry.objects.get()
    assert (entry.result, entry.before, entry.after) == (
        "applied",
        {"spec.resources.limits.memory": None},
        {"spec.resources.limits.memory": "128Mi"},
    )
    # As the watcher would: the mirror sees the limit, and an empty field removes it.
    KubeObject.objects.filter(namespace=namespace, name="cache-a").update(spec=live["spec"])
    html = _memory_change(operator_client, cache_a, "")
    assert "<code>spec.resources.limits.memory</code> → <code>none</code>" in html
    # A merge patch's null removes the key and leaves the maps around it (RFC 7386).
    assert cluster_kube.get(MEMCACHED, namespace, "cache-a")["spec"]["resources"] == {"limits": {}}


def test_cpu_and_memory_requests_and_limits_are_reviewed_applied_and_audited(
    operator_client: Client, cluster_kube: ApiKube, namespace: str, cache_a: str
) -> None:
    """What a pod that fits on no node, or that a quota refuses, needs lowered."""
    form = {"size": "3", "image": "memcached:1.4.36-alpine", "cpu_request": "100m",
            "memory_request": "64Mi", "cpu_limit": "500m", "memory": "128Mi"}  # fmt: skip
    html = operator_client.post(cache_a + "patch/", form, HTTP_HX_REQUEST="true").content.decode()
    for path, value in (("requests.cpu", "100m"), ("requests.memory", "64Mi"),
                        ("limits.cpu", "500m"), ("limits.memory", "128Mi")):  # fmt: skip
        assert re.search(rf"spec\.resources\.{path}</td><td><del>—</del></td><td><ins>{value}<",
                         html), path  # fmt: skip
    operator_client.post(cache_a + "patch/apply/", hidden_fields(html), HTTP_HX_REQUEST="true")
    assert cluster_kube.get(MEMCACHED, namespace, "cache-a")["spec"]["resources"] == {
        "requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "128Mi"},
    }  # fmt: skip
    entry = AuditEntry.objects.get()
    assert (entry.result, entry.after) == ("applied", {
        "spec.resources.requests.cpu": "100m", "spec.resources.requests.memory": "64Mi",
        "spec.resources.limits.cpu": "500m", "spec.resources.limits.memory": "128Mi",
    })  # fmt: skip


def _shop(kube: ApiKube, namespace: str, *, app_replicas: int) -> tuple[Body, str]:
    """BookStore shop (one DB replica), as the API server defaulted it and mirrored; its
    page's URL."""
    kube.create(BOOKSTORE, {
        "apiVersion": BOOKSTORE.api_version, "kind": "BookStore",
        "metadata": {"name": "shop", "namespace": namespace},
        "spec": {"bookApp": {"replicas": app_replicas}, "bookDB": {"replicas": 1}},
    })  # fmt: skip
    live = kube.get(BOOKSTORE, namespace, "shop")
    mirror_object("BookStore", "shop", namespace=namespace, api_version=BOOKSTORE.api_version,
                  spec=live["spec"])  # fmt: skip
    return live, f"/k/bookstore/{namespace}/shop/"


def test_a_bookstores_database_memory_limit_is_set_from_its_own_field(
    operator_client: Client, cluster_kube: ApiKube, namespace: str
) -> None:
    live, url = _shop(cluster_kube, namespace, app_replicas=1)
    form = {"size": "1", "image": live["spec"]["bookApp"]["image"], "memory": "",
            "memory_mongodb": "512Mi", "size_mongodb": "1",
            "image_mongodb": live["spec"]["bookDB"]["image"],
            "storage": live["spec"]["bookDB"]["dbSize"]}  # fmt: skip
    html = operator_client.post(url + "patch/", form, HTTP_HX_REQUEST="true").content.decode()
    assert re.search(
        r"spec\.bookDB\.resources\.limits\.memory</td><td><del>—</del></td><td><ins>512Mi<", html
    ), html
    operator_client.post(url + "patch/apply/", hidden_fields(html), HTTP_HX_REQUEST="true")
    live = cluster_kube.get(BOOKSTORE, namespace, "shop")
    assert live["spec"]["bookDB"]["resources"]["limits"] == {"memory": "512Mi"}
    assert "limits" not in (live["spec"]["bookApp"].get("resources") or {})
    entry = AuditEntry.objects.get()
    assert (entry.result, entry.after) == (
        "applied",
        {"spec.bookDB.resources.limits.memory": "512Mi"},
    )


def test_a_bookstores_database_replicas_and_image_are_reviewed_applied_and_audited(
    operator_client: Client, cluster_kube: ApiKube, namespace: str
) -> None:
    """A merge patch of spec.bookDB: the CRD's /scale is the app's replicas."""
    live, url = _shop(cluster_kube, namespace, app_replicas=2)
    form = {"size": "2", "image": live["spec"]["bookApp"]["image"], "size_mongodb": "3",
            "image_mongodb": "mongo:7.0.14", "storage": live["spec"]["bookDB"]["dbSize"]}  # fmt: skip
    html = operator_client.post(url + "patch/", form, HTTP_HX_REQUEST="true").content.decode()
    assert re.search(r"spec\.bookDB\.replicas</td><td><del>1</del></td><td><ins>3<", html), html
    assert re.search(r"spec\.bookDB\.image</td><td><del>mongo:7.0</del></td><td><ins>mongo:7", html)
    assert "/scale" not in html
    operator_client.post(url + "patch/apply/", hidden_fields(html), HTTP_HX_REQUEST="true")
    spec = cluster_kube.get(BOOKSTORE, namespace, "shop")["spec"]
    assert (spec["bookDB"]["replicas"], spec["bookDB"]["image"]) == (3, "mongo:7.0.14")
    assert (spec["bookApp"]["replicas"], spec["bookApp"]["image"]) == (2, form["image"])
    entry = AuditEntry.objects.get()
    assert (entry.result, entry.before, entry.after, entry.message) == (
        "applied",
        {"spec.bookDB.replicas": 1, "spec.bookDB.image": "mongo:7.0"},
        {"spec.bookDB.replicas": 3, "spec.bookDB.image": "mongo:7.0.14"},
        "Patched to generation 2",
    )


def test_a_webservers_nodeport_is_set_and_removed_reviewed_and_audited(
    operator_client: Client, cluster_kube: ApiKube, namespace: str
) -> None:
    port = random.randint(30100, 32700)
    cluster_kube.create(WEBSERVER, {
        "apiVersion": WEBSERVER.api_version, "kind": "WebServer",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {"replicas": 1, "image": "nginx:1.25.3"},
    })  # fmt: skip
    url = f"/k/webserver/{namespace}/web/"
    for before, after in ((None, port), (port, None)):
        spec = cluster_kube.get(WEBSERVER, namespace, "web")["spec"]
        assert spec.get("nodePort") == before
        KubeObject.objects.filter(kind="WebServer", namespace=namespace).delete()
        mirror_object("WebServer", "web", namespace=namespace, api_version=WEBSERVER.api_version,
                      spec=spec)  # fmt: skip
        form = {"size": "1", "image": "nginx:1.25.3", "node_port": after or ""}
        html, hidden = review(operator_client, url, form, HTTP_HX_REQUEST="true")
        shown = (str(v) if v else "—" for v in (before, after))
        assert re.search(
            r"spec\.nodePort</td><td><del>{}</del></td><td><ins>{}<".format(*shown), html
        )
        operator_client.post(url + "patch/apply/", hidden, HTTP_HX_REQUEST="true")
    assert "nodePort" not in cluster_kube.get(WEBSERVER, namespace, "web")["spec"]
    assert [(e.result, e.before, e.after) for e in AuditEntry.objects.order_by("at")] == [
        ("applied", {"spec.nodePort": None}, {"spec.nodePort": port}),
        ("applied", {"spec.nodePort": port}, {"spec.nodePort": None}),
    ]


def test_a_ptemplates_devices_per_pod_are_reviewed_applied_and_audited(
    operator_client: Client, cluster_kube: ApiKube, namespace: str
) -> None:
    cluster_kube.create(PTEMPLATE, {
        "apiVersion": PTEMPLATE.api_version, "kind": PTEMPLATE.kind,
        "metadata": {"name": "accel", "namespace": namespace},
        "spec": {**PTEMPLATE_SPEC, "deviceCount": 2},
    })  # fmt: skip
    live = cluster_kube.get(PTEMPLATE, namespace, "accel")
    mirror_object("Ptemplate", "accel", namespace=namespace, api_version=PTEMPLATE.api_version,
                  spec=live["spec"])  # fmt: skip
    url = f"/k/ptemplate/{namespace}/accel/"
    form = {"image": live["spec"]["image"], "memory": "", "devices": "1",
            "node_selector": "node-role.kubernetes.io/worker="}  # fmt: skip
    html = operator_client.post(url + "patch/", form, HTTP_HX_REQUEST="true").content.decode()
    assert re.search(r"spec\.deviceCount</td><td><del>2</del></td><td><ins>1<", html), html
    operator_client.post(url + "patch/apply/", hidden_fields(html), HTTP_HX_REQUEST="true")
    assert cluster_kube.get(PTEMPLATE, namespace, "accel")["spec"]["deviceCount"] == 1
    entry = AuditEntry.objects.get()
    assert (entry.result, entry.before, entry.after) == (
        "applied",
        {"spec.deviceCount": 2},
        {"spec.deviceCount": 1},
    )


def _review_storage(client: Client, kube: ApiKube, namespace: str, url: str) -> str:
    spec = kube.get(BOOKSTORE, namespace, "shop")["spec"]
    form = {"size": "1", "image": spec["bookApp"]["image"], "memory": "", "memory_mongodb": "",
            "size_mongodb": "1", "image_mongodb": spec["bookDB"]["image"], "storage": "2Gi"}  # fmt: skip
    html = client.post(url + "patch/", form, HTTP_HX_REQUEST="true").content.decode()
    assert re.search(r"spec\.bookDB\.dbSize</td><td><del>1Gi</del></td><td><ins>2Gi<", html), html
    return html


def test_a_growth_the_claims_storage_class_does_not_allow_is_told_at_the_review(
    operator_client: Client, cluster_kube: ApiKube, kube_api_client: Any, namespace: str
) -> None:
    """The API server takes the larger size, and admission then refuses the operator's
    growth of the claim: the review says so first, with the command that allows it."""
    storage = client.StorageV1Api(kube_api_client)
    name = f"fixed-{namespace}"
    storage.create_storage_class({
        "metadata": {"name": name}, "provisioner": "example.com/fixed",
        "allowVolumeExpansion": False,
    })  # fmt: skip
    try:
        url = bookstore_with_a_claim(cluster_kube, namespace, name)
        html = _review_storage(operator_client, cluster_kube, namespace, url)
        assert (
            f"StorageClass {name} of the claim data-shop-db-0 does not allow volumes to grow "
            "(allowVolumeExpansion): the API server will refuse to grow it, and the BookStore "
            "will be Degraded (VolumeExpansionFailed) until a cluster administrator allows it "
            f"(kubectl patch storageclass {name} -p &#x27;{{&quot;allowVolumeExpansion&quot;: "
            "true}&#x27;), if its provisioner can grow volumes. The operator grows it then."
        ) in html
        assert ">Apply</button>" in html  # told, not refused: the class may be changed later

        storage.patch_storage_class(name, {"allowVolumeExpansion": True})
        html = _review_storage(operator_client, cluster_kube, namespace, url)
        assert 'class="warn" role="note"' not in html
    finally:
        storage.delete_storage_class(name)
    html = _review_storage(operator_client, cluster_kube, namespace, url)
    assert (
        f"StorageClass {name} of the claim data-shop-db-0 does not exist: the API server will "
        "refuse to grow it"
    ) in html
    assert cluster_kube.get(BOOKSTORE, namespace, "shop")["spec"]["bookDB"]["dbSize"] == "1Gi"


def test_a_storage_class_the_web_app_may_not_read_is_said_unchecked(
    operator_client: Client, cluster_kube: ApiKube, kube_api_client: Any, kubesim_server: Any,
    namespace: str, tmp_path: Path, settings: Any,
) -> None:  # fmt: skip
    """The web app as a ServiceAccount with an older install's role (BookStores only): the
    review goes on, and says the class was not checked and what grants the read."""
    web = unique("web")
    token = service_account_token(kube_api_client, namespace, web)
    admin = Path(kubesim_server.kubeconfig_path)
    kubeconfig = kubeconfig_with_token(admin, token, user=web, path=tmp_path / "kubeconfig")
    rbac = client.RbacAuthorizationV1Api(kube_api_client)
    url = bookstore_with_a_claim(cluster_kube, namespace, "standard")
    with cluster_objects(kube_api_client) as made:
        rbac.create_cluster_role({"metadata": {"name": web}, "rules": [
            {"apiGroups": [BOOKSTORE.group], "resources": ["bookstores"], "verbs": ["get", "patch"]},
        ]})  # fmt: skip
        made.append(("ClusterRole", web))
        rbac.create_cluster_role_binding({
            "metadata": {"name": web},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": web},
            "subjects": [{"kind": "ServiceAccount", "name": web, "namespace": namespace}],
        })  # fmt: skip
        made.append(("ClusterRoleBinding", web))
        settings.KUBECONFIG = str(kubeconfig)
        html = _review_storage(operator_client, cluster_kube, namespace, url)
    assert (
        "Whether StorageClass standard lets the claim data-shop-db-0 grow was not checked: "
        "the web app may not read StorageClasses (the install&#x27;s k8s/deploy/web-rbac.yaml "
        "grants it; the API server said: GET /apis/storage.k8s.io/v1/storageclasses/standard: "
        "403 storageclasses.storage.k8s.io &quot;standard&quot; is "
        f"forbidden: User &quot;system:serviceaccount:{namespace}:{web}&quot; cannot get "
        "resource &quot;storageclasses&quot;"
    ) in html, html
    assert ">Apply</button>" in html
