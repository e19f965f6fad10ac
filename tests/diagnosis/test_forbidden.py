"""A 403 diagnosed: the operators run as a ServiceAccount whose ClusterRole (k8s/rbac/
role.yaml) lacks one verb, and the CR's diagnosis names that verb, the resource and its
group, and the ClusterRole to change. kubesim enforces RBAC as kube-apiserver does, and
a real cluster (OPSBOARD_TEST_KUBECONFIG) runs the same test. A 403 that admission gives
(a webhook's) is told apart, no grant helping there: tests/diagnosis/test_webhooks.py."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.test import Client

from controllers.base import DEPLOYMENT
from controllers.conditions import condition_of
from controllers.kube import MERGE_PATCH, ApiKube
from controllers.memcached.desired import MEMCACHED
from opsboard.engine.models import ReconcileRun
from tests.diagnosis.memcached_run import create_memcached, start_operator_in
from tests.fixtures.celery import EngineProcesses
from tests.kubesim.identities import kubeconfig_with_token, rules_without
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)
RBAC = Path(__file__).resolve().parents[2] / "k8s" / "rbac"
CLUSTER_ROLES = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
CLUSTER_BINDINGS = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"


@pytest.fixture
def operator_identity(
    kubesim_server: Any, cluster_kube: ApiKube, namespace: str, tmp_path: Path
) -> Iterator[tuple[str, Path]]:
    """A ServiceAccount bound to the operators' ClusterRole minus `create` on deployments;
    yields the role's name and a kubeconfig that authenticates as the ServiceAccount."""
    suffix = uuid.uuid4().hex[:8]
    role_name, account = f"opsboard-operator-{suffix}", "opsboard-operator"
    role = yaml.safe_load((RBAC / "role.yaml").read_text())
    lease_rules = yaml.safe_load((RBAC / "leader_election_role.yaml").read_text())["rules"]
    kube = cluster_kube
    kube.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts",
                 body={"metadata": {"name": account}})  # fmt: skip
    kube.request("POST", CLUSTER_ROLES, body={
        "metadata": {"name": role_name},
        "rules": rules_without(role["rules"], "apps", "deployments", "create"),
    })  # fmt: skip
    subject = [{"kind": "ServiceAccount", "name": account, "namespace": namespace}]
    kube.request("POST", CLUSTER_BINDINGS, body={
        "metadata": {"name": role_name}, "subjects": subject,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": role_name},
    })  # fmt: skip
    rbac_ns = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}"
    kube.request("POST", f"{rbac_ns}/roles",
                 body={"metadata": {"name": "leases"}, "rules": lease_rules})  # fmt: skip
    kube.request("POST", f"{rbac_ns}/rolebindings", body={
        "metadata": {"name": "leases"}, "subjects": subject,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "leases"},
    })  # fmt: skip
    token = kube.request(
        "POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token",
        body={"spec": {"expirationSeconds": 3600}},
    )["status"]["token"]  # fmt: skip
    path = tmp_path / "operator.kubeconfig"
    yield (
        role_name,
        kubeconfig_with_token(Path(kubesim_server.kubeconfig_path), token, user=account, path=path),
    )
    for url in (f"{CLUSTER_BINDINGS}/{role_name}", f"{CLUSTER_ROLES}/{role_name}"):
        kube.request("DELETE", url)


def test_a_missing_verb_is_diagnosed_naming_verb_resource_and_cluster_role(
    engine: EngineProcesses, operator_identity: tuple[str, Path], cluster_kube: ApiKube,
    namespace: str, viewer_client: Client, settings: Any,
) -> None:  # fmt: skip
    role_name, kubeconfig = operator_identity
    settings.OPSBOARD_OPERATOR_CLUSTER_ROLE = role_name
    engine.kubeconfig = str(kubeconfig)
    engine.extra_env["OPSBOARD_DENIED_RETRY"] = "0.5"  # a grant is looked for this often
    start_operator_in(engine, namespace)  # it may lease only there
    create_memcached(cluster_kube, namespace, "denied", size=1)
    run = wait_for(
        lambda: ReconcileRun.objects.filter(namespace=namespace, name="denied", error__contains="403").first(),
        timeout=60, what="a run refused with 403",
    )  # fmt: skip
    # Retried, slowly: a grant needs no change of the CR and no one to press Reconcile now.
    assert run.outcome == "error"

    response = viewer_client.get(f"/k/memcached/{namespace}/denied/")
    finding = response.context["diagnosis"].findings[0]
    assert finding.code == "Forbidden"
    assert "lacks verb create on resource deployments in API group apps" in finding.what
    assert f"ClusterRole {role_name}" in finding.todo and 'verb "create"' in finding.todo
    assert 'data-code="Forbidden"' in response.content.decode()

    # The verb granted, nothing else done: the next slow retry creates the Deployment and
    # the CR's Degraded, the 403's, is taken back.
    role = yaml.safe_load((RBAC / "role.yaml").read_text())
    cluster_kube.request(
        "PATCH", f"{CLUSTER_ROLES}/{role_name}", body={"rules": role["rules"]},
        content_type=MERGE_PATCH,
    )  # fmt: skip
    wait_for(
        lambda: cluster_kube.get(DEPLOYMENT, namespace, "denied"),
        timeout=60, what="the Deployment created once the verb is granted",
    )  # fmt: skip
    degraded = wait_for(
        lambda: (c := condition_of(cluster_kube.get(MEMCACHED, namespace, "denied"), "Degraded"))
        and c.get("status") == "False" and c,
        timeout=60, what="Degraded taken back",
    )  # fmt: skip
    assert "403" not in degraded.get("message", ""), degraded
