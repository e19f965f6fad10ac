"""Cluster fixtures for the patch tests: the operators' CRDs installed in the suite's
kubesim (or the real cluster of OPSBOARD_TEST_KUBECONFIG), the web app pointed at it, and
RBAC for the impersonation tests."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from kubernetes import client

from controllers.base import PVC
from controllers.bookstore.desired import BOOKSTORE
from controllers.kube import ApiKube, load_api_client
from controllers.memcached.desired import MEMCACHED
from opsboard.accounts.kube_identity import KubeIdentity
from opsboard.accounts.roles import Role, role_assign
from opsboard.dashboard import crclient
from tests.controllers.cluster import install_crds
from tests.controllers.manifests import db_claim
from tests.dashboard.mirror_factory import MEMCACHED_API, mirror_object


@pytest.fixture(scope="session")
def dashboard_crds(kubesim_server: Any) -> None:
    api_client = load_api_client(kubeconfig=str(kubesim_server.kubeconfig_path))
    try:
        install_crds(ApiKube(api_client))
    finally:
        api_client.close()


@pytest.fixture
def cluster_kube(kube_api_client: Any, dashboard_crds: None, kubesim_server: Any,
                 settings: Any) -> ApiKube:  # fmt: skip
    """An ApiKube for the test's own reads and writes; the web app uses the same cluster."""
    settings.KUBECONFIG = str(kubesim_server.kubeconfig_path)
    return ApiKube(kube_api_client)


IMPERSONATION_SPEC = {"size": 3, "image": "memcached:1.4.36-alpine"}


@pytest.fixture
def impersonation_rbac(
    cluster_kube: ApiKube, kube_api_client: Any, namespace: str, settings: Any
) -> str:
    """In a fresh namespace: cache-a (size 3, mirrored too); group `<ns>-readers` may read
    memcacheds there, group `<ns>-writers` may also patch them."""
    nobody = KubeIdentity(user=f"nobody-{uuid.uuid4().hex[:6]}")
    crclient._kube_for.cache_clear()
    try:
        enforced = crclient.access_refusal(MEMCACHED, namespace, "patch", as_user=nobody)
    except crclient.ClusterError:
        enforced = ""
    if not enforced:
        pytest.skip("this API server does not enforce RBAC (kubesim without issue 14's RBAC)")
    rbac_api = client.RbacAuthorizationV1Api(kube_api_client)
    for group, verbs in (("readers", ["get", "list", "watch"]), ("writers", ["get", "patch"])):
        name = f"memcached-{group}"
        rbac_api.create_namespaced_role(namespace, {
            "metadata": {"name": name},
            "rules": [{"apiGroups": ["cache.example.com"], "verbs": verbs,
                       "resources": ["memcacheds", "memcacheds/scale"]}],
        })  # fmt: skip
        rbac_api.create_namespaced_role_binding(namespace, {
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                          "name": f"{namespace}-{group}"}],
        })  # fmt: skip
    cluster_kube.create(MEMCACHED, {
        "apiVersion": MEMCACHED_API, "kind": "Memcached",
        "metadata": {"name": "cache-a", "namespace": namespace}, "spec": IMPERSONATION_SPEC,
    })  # fmt: skip
    mirror_object("Memcached", "cache-a", namespace=namespace, api_version=MEMCACHED_API,
                  spec=IMPERSONATION_SPEC)  # fmt: skip
    settings.OPSBOARD_KUBE_IMPERSONATE = True
    return f"/k/memcached/{namespace}/cache-a/"


def operator_in_group(settings: Any, group: str) -> Client:
    """A client logged in as rita, an opsboard operator everywhere, whom the web sends to
    the cluster as a member of `group` (OPSBOARD_KUBE_ROLE_GROUPS)."""
    settings.OPSBOARD_KUBE_ROLE_GROUPS = {"operator": [group]}
    rita = User.objects.create_user("rita")
    role_assign(user=rita, role=Role.OPERATOR)
    person = Client()
    person.force_login(rita)
    return person


def bookstore_with_a_claim(kube: ApiKube, namespace: str, storage_class: str) -> str:
    """BookStore shop reporting claim data-shop-db-0 of `storage_class` (the claim made in
    the cluster and mirrored, the status as its operator writes it); its page's URL."""
    claim = kube.create(PVC, db_claim(namespace, "1Gi", storage_class=storage_class))
    mirror_object("PersistentVolumeClaim", claim["metadata"]["name"], namespace=namespace,
                  spec=claim["spec"])  # fmt: skip
    kube.create(BOOKSTORE, {
        "apiVersion": BOOKSTORE.api_version, "kind": "BookStore",
        "metadata": {"name": "shop", "namespace": namespace},
        "spec": {"bookApp": {"replicas": 1}, "bookDB": {"replicas": 1, "dbSize": "1Gi"}},
    })  # fmt: skip
    status = {"claims": [{"name": "data-shop-db-0", "requested": "1Gi", "state": "Pending"}]}
    live = kube.patch_status(BOOKSTORE, namespace, "shop", status)
    mirror_object("BookStore", "shop", namespace=namespace, api_version=BOOKSTORE.api_version,
                  spec=live["spec"], status=live["status"])  # fmt: skip
    return f"/k/bookstore/{namespace}/shop/"
