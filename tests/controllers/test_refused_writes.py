"""Writes the API server refuses with 403, told apart: authorization's (a verb the role
lacks: NotGranted) and admission's (a quota, a StorageClass that cannot grow a claim).

BookStore run as an operator whose role lacks `patch` on PersistentVolumeClaims: growing a
claim is the missing grant, raised as such, so the engine retries it and the diagnosis names
the verb, not a VolumeExpansionFailed that waits for the CR to change."""

from __future__ import annotations

import pytest
import yaml
from kubernetes import client

from controllers.base import POD, PVC
from controllers.bookstore import CONTROLLER
from controllers.bookstore.desired import BOOKSTORE
from controllers.fields import deep_get
from controllers.kube import ApiKube, Forbidden, NotGranted
from tests.controllers.cluster import by_hand
from tests.controllers.manifests import K8S, db_claim
from tests.kubesim.cluster.helpers import create_quota
from tests.kubesim.identities import (
    client_with_token,
    cluster_objects,
    rules_without,
    service_account_token,
    unique,
)
from tests.support.waiting import wait_for

RBAC = "rbac.authorization.k8s.io"


def test_a_claim_the_operator_may_not_patch_is_a_missing_grant_not_a_failed_expansion(
    kube: ApiKube, kube_api_client: client.ApiClient, namespace: str
) -> None:
    role = yaml.safe_load((K8S / "rbac" / "role.yaml").read_text())
    name = unique("bookstore-no-claim-patch")
    rbac = client.RbacAuthorizationV1Api(kube_api_client)
    with cluster_objects(kube_api_client) as made:
        rules = rules_without(role["rules"], "", "persistentvolumeclaims", "patch")
        rbac.create_cluster_role({"metadata": {"name": name}, "rules": rules})
        made.append(("ClusterRole", name))
        rbac.create_namespaced_role_binding(namespace, {
            "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": "operator", "namespace": namespace}],
        })  # fmt: skip
        token = service_account_token(kube_api_client, namespace, "operator")
        kube.create(PVC, db_claim(namespace, "1Gi"))  # the DB's claim, to grow to 2Gi
        # Only a bound claim is grown (the API server refuses to grow any other).
        wait_for(
            lambda: deep_get(kube.get(PVC, namespace, "data-shop-db-0"), "status.phase") == "Bound",
            what="the claim bound",
        )
        kube.create(BOOKSTORE, {
            "apiVersion": BOOKSTORE.api_version, "kind": BOOKSTORE.kind,
            "metadata": {"name": "shop", "namespace": namespace},
            "spec": {"bookDB": {"dbSize": "2Gi"}},
        })  # fmt: skip
        with client_with_token(kube_api_client, token) as api:
            operator = ApiKube(api)
            ctx = by_hand(CONTROLLER.name, namespace, "shop", operator)
            with pytest.raises(NotGranted) as refused:
                CONTROLLER.reconcile(ctx)
    assert 'cannot patch resource "persistentvolumeclaims"' in str(refused.value)
    claim = kube.get(PVC, namespace, "data-shop-db-0") or {}
    assert deep_get(claim, "spec.resources.requests.storage") == "1Gi"


def test_a_quotas_refusal_is_forbidden_but_not_a_missing_grant(
    kube: ApiKube, kube_api_client: client.ApiClient, namespace: str
) -> None:
    create_quota(client.CoreV1Api(kube_api_client), namespace, {"pods": "0"})
    pod = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "refused", "namespace": namespace},
        "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]},
    }  # fmt: skip
    with pytest.raises(Forbidden) as refused:
        kube.create(POD, pod)
    assert "exceeded quota" in str(refused.value)
    assert not isinstance(refused.value, NotGranted)
