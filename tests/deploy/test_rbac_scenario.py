"""The operators, run by the real engine against kubesim, and the dashboard's patch make only
API calls that the RBAC of the install (`kubectl kustomize k8s/deploy`) grants their pods'
ServiceAccounts.

Every request they send is taken from kubesim's request log and checked against the built
Roles and bindings with tests/deploy/rbac.py: it names every call nobody granted, even those
the test's admin identity makes succeed. (make run's test and tests/engine/test_missing_grant.py
run the engine as the ServiceAccount itself, with kubesim enforcing RBAC.)
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings

from controllers.base import DEPLOYMENT, POD, SERVICE, Kind
from controllers.fields import deep_get
from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from controllers.webserver.desired import WEBSERVER
from opsboard.dashboard import crclient, patching, pod_logs
from opsboard.dashboard.kinds import kind_get
from tests.controllers.cluster import install_crds
from tests.dashboard.cluster_fixtures import bookstore_with_a_claim
from tests.dashboard.mirror_factory import MEMCACHED_API, mirror_object
from tests.deploy import rbac
from tests.deploy.kustomize import Manifest
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.kubesim_only]
TEST_AGENT = "opsboard-tests/rbac-scenario"  # the test's own calls, told apart in the log
Call = tuple[str, str, str, str]  # (verb, group, resource, subresource)


def _grants_of(built: list[Manifest], *deployments: str) -> list[rbac.Grant]:
    """What the ServiceAccount of these Deployments' pods may do."""
    found = {d["metadata"]["name"]: d for d in built if d["kind"] == "Deployment"}
    [(account, namespace)] = {
        (found[name]["spec"]["template"]["spec"]["serviceAccountName"],
         found[name]["metadata"]["namespace"])
        for name in deployments
    }  # fmt: skip
    return rbac.grants_for(built, account=account, namespace=namespace)


def _calls_since(kubesim_server: Any, since: float) -> list[tuple[rbac.Request, Call]]:
    """Every resource request made since `since`, except the test's own."""
    calls = []
    for record in kubesim_server.request_log(since=since):
        if record.user_agent == TEST_AGENT:
            continue
        request = rbac.parse(record.method, record.path, watch=record.verb == "watch")
        if request is None:
            assert rbac.discovery(record.method, record.path), record.path
            continue
        calls.append(
            (request, (request.verb, request.group, request.resource, request.subresource))
        )
    return calls


def _denied(grants: list[rbac.Grant], calls: list[tuple[rbac.Request, Call]]) -> list[str]:
    return sorted({str(request) for request, _ in calls if not rbac.allowed(grants, request)})


@pytest.fixture
def kube(kube_api_client: Any) -> ApiKube:
    kube_api_client.user_agent = TEST_AGENT
    kube = ApiKube(kube_api_client)
    install_crds(kube)
    return kube


def _create(kube: ApiKube, kind: Kind, namespace: str, name: str, **spec: Any) -> None:
    metadata = {"name": name, "namespace": namespace}
    kube.create(kind, {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": metadata,
                       "spec": spec})  # fmt: skip


def _ready(kube: ApiKube, kind: Kind, namespace: str, name: str, replicas: int) -> bool:
    cr = kube.get(kind, namespace, name) or {}
    nodes = deep_get(cr, "status.nodes") or []
    return deep_get(cr, "status.readyReplicas") == replicas and len(nodes) == replicas


def _degraded(kube: ApiKube, kind: Kind, namespace: str, name: str) -> bool:
    conditions = deep_get(kube.get(kind, namespace, name), "status.conditions") or []
    return any(c.get("type") == "Degraded" and c.get("status") == "True" for c in conditions)


def _run_the_operators(kube: ApiKube, namespace: str) -> None:
    """Create, scale, heal and delete a Memcached; a WebServer; a missing image."""
    _create(kube, MEMCACHED, namespace, "cache", size=2)
    wait_for(lambda: _ready(kube, MEMCACHED, namespace, "cache", 2), what="cache at 2")
    kube.patch(MEMCACHED, namespace, "cache", {"spec": {"size": 3}})
    wait_for(lambda: _ready(kube, MEMCACHED, namespace, "cache", 3), what="cache at 3")
    kube.delete(DEPLOYMENT, namespace, "cache")
    wait_for(lambda: _ready(kube, MEMCACHED, namespace, "cache", 3), what="cache healed")
    _create(kube, WEBSERVER, namespace, "web", replicas=1)
    wait_for(lambda: _ready(kube, WEBSERVER, namespace, "web", 1), what="web at 1")
    wait_for(lambda: kube.get(SERVICE, namespace, "web-service"), what="web-service")
    _create(kube, MEMCACHED, namespace, "broken", size=1, image="memcached:does-not-exist")
    wait_for(lambda: _degraded(kube, MEMCACHED, namespace, "broken"), what="broken Degraded")
    kube.delete(MEMCACHED, namespace, "cache")
    wait_for(lambda: kube.get(MEMCACHED, namespace, "cache") is None, what="cache deleted")


def test_every_call_of_the_engine_and_the_operators_is_granted(
    built: list[Manifest], engine: Any, kube: ApiKube, kubesim_server: Any, namespace: str,
    opsboard_namespace: str,
) -> None:  # fmt: skip
    grants = _grants_of(built, "opsboard-worker", "opsboard-watcher")
    # The engine runs with the install's settings that shape its calls.
    [config] = [d for d in built if d["kind"] == "ConfigMap"]
    for name in ("OPSBOARD_LEASE_NAMESPACE", "OPSBOARD_WATCH_NAMESPACES"):
        engine.extra_env[name] = config["data"][name]
    since = time.time()
    engine.start_worker(concurrency=2)
    engine.start_watcher()

    _run_the_operators(kube, namespace)
    engine.stop_all()  # the watcher releases its Lease on the way out: one more call

    calls = _calls_since(kubesim_server, since)
    assert not _denied(grants, calls)
    # The scenario exercised the rights that matter, so "nothing denied" means something.
    assert {
        ("watch", "cache.example.com", "memcacheds", ""),
        ("create", "apps", "deployments", ""),
        ("patch", "apps", "deployments", ""),
        ("patch", "cache.example.com", "memcacheds", "status"),
        ("create", "", "services", ""),
        ("create", "", "events", ""),
        ("update", "coordination.k8s.io", "leases", ""),
    } <= {call for _, call in calls}


def test_every_call_of_a_dashboard_patch_is_granted(
    built: list[Manifest], kube: ApiKube, kubesim_server: Any, namespace: str
) -> None:
    grants = _grants_of(built, "opsboard-web")
    _create(kube, MEMCACHED, namespace, "cache", size=1)
    user = get_user_model().objects.create(username="operator")
    info = kind_get("memcached")
    since = time.time()

    with override_settings(KUBECONFIG=str(kubesim_server.kubeconfig_path)):
        crclient._kube_for.cache_clear()
        review = patching.cr_patch_review(
            info=info, namespace=namespace, name="cache", changes={"spec.size": 2}
        )
        applied = patching.cr_patch_apply(
            user=user, info=info, namespace=namespace, name="cache",
            changes={"spec.size": 2}, resource_version=review.resource_version,
        )  # fmt: skip
        assert applied.ok, applied.entry.message
        image = {"spec.image": "memcached:1.6"}  # not a size: a merge patch of the CR
        review = patching.cr_patch_review(
            info=info, namespace=namespace, name="cache", changes=image
        )
        applied = patching.cr_patch_apply(
            user=user, info=info, namespace=namespace, name="cache",
            changes=image, resource_version=review.resource_version,
        )  # fmt: skip
    crclient._kube_for.cache_clear()

    assert applied.ok, applied.entry.message
    calls = _calls_since(kubesim_server, since)
    assert not _denied(grants, calls)
    assert {call for _, call in calls} == {
        ("get", "cache.example.com", "memcacheds", ""),
        ("patch", "cache.example.com", "memcacheds", "scale"),  # a size alone: by /scale
        ("patch", "cache.example.com", "memcacheds", ""),
    }


def test_a_review_that_grows_volumes_reads_their_class_as_granted(
    built: list[Manifest], kube: ApiKube, kubesim_server: Any, namespace: str
) -> None:
    """A review of a BookStore's larger volume size reads the claims' StorageClass: a call
    the web's install grants, or the review would say the class was not checked."""
    grants = _grants_of(built, "opsboard-web")
    bookstore_with_a_claim(kube, namespace, "standard")  # kubesim's, which lets claims grow
    since = time.time()

    with override_settings(KUBECONFIG=str(kubesim_server.kubeconfig_path)):
        crclient._kube_for.cache_clear()
        review = patching.cr_patch_review(
            info=kind_get("bookstore"), namespace=namespace, name="shop",
            changes={"spec.bookDB.dbSize": "2Gi"},
        )  # fmt: skip
    crclient._kube_for.cache_clear()

    assert (review.error, review.warnings) == ("", [])
    calls = _calls_since(kubesim_server, since)
    assert not _denied(grants, calls)
    assert {call for _, call in calls} == {
        ("get", "blog.velotio.com", "bookstores", ""),
        ("patch", "blog.velotio.com", "bookstores", ""),  # the dry run
        ("get", "storage.k8s.io", "storageclasses", ""),
    }


def test_a_pods_log_on_its_crs_page_is_read_as_granted(
    built: list[Manifest], kube: ApiKube, kubesim_server: Any, namespace: str
) -> None:
    grants = _grants_of(built, "opsboard-web")
    kube.create(POD, {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "cache-0", "namespace": namespace},
        "spec": {"containers": [{"name": "memcached", "image": "memcached:1.6"}]},
    })  # fmt: skip
    wait_for(lambda: deep_get(kube.get(POD, namespace, "cache-0"), "status.phase") == "Running",
             what="the pod running")  # fmt: skip
    cr = mirror_object("Memcached", "cache", namespace=namespace, api_version=MEMCACHED_API)
    pod = mirror_object("Pod", "cache-0", namespace=namespace, owner=cr,
                        spec=kube.get(POD, namespace, "cache-0")["spec"])  # fmt: skip
    since = time.time()

    with override_settings(KUBECONFIG=str(kubesim_server.kubeconfig_path)):
        crclient._kube_for.cache_clear()
        log = pod_logs.read(pod, container=None, previous=False, as_user=None)
    crclient._kube_for.cache_clear()

    assert (log.container, log.error) == ("memcached", "")
    calls = _calls_since(kubesim_server, since)
    assert not _denied(grants, calls)
    assert {call for _, call in calls} == {("get", "", "pods", "log")}
