"""The engine run as a ServiceAccount that lacks one grant, as a cluster install runs it: the
403 names the verb and resource in the run log and in the CR's Degraded condition."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from controllers.conditions import condition_of
from controllers.kube import ApiKube
from opsboard.core.identities import with_token as kubeconfig_with_token
from opsboard.core.identities import write_kubeconfig
from opsboard.engine.models import ReconcileRun
from tests.engine.toy import TOY, toy
from tests.fixtures.celery import EngineProcesses
from tests.kubesim.identities import cluster_objects, service_account_token, unique
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)
RBAC = "rbac.authorization.k8s.io"
# Everything the toy operator needs but creating its ConfigMaps.
RULES = [
    {"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["test.opsboard.dev"], "resources": ["toys/status"], "verbs": ["patch"]},
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["patch"]},
    {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create", "update"]},
]


def test_a_missing_grant_is_named_in_the_run_and_on_the_cr(
    engine: EngineProcesses,
    toy_crd: None,
    api: ApiKube,
    kube_api_client: client.ApiClient,
    kubesim_server: Any,
    namespace: str,
    tmp_path: Path,
) -> None:
    name = unique("h14-toy-operator")
    rbac = client.RbacAuthorizationV1Api(kube_api_client)
    token = service_account_token(kube_api_client, namespace, "toy-operator")
    admin = yaml.safe_load(Path(kubesim_server.kubeconfig_path).read_text())
    kubeconfig = tmp_path / "kubeconfig-toy-operator"
    write_kubeconfig(kubeconfig, kubeconfig_with_token(admin, token, user="toy-operator"))
    with cluster_objects(kube_api_client) as made:
        rbac.create_cluster_role({"metadata": {"name": name}, "rules": RULES})
        made.append(("ClusterRole", name))
        rbac.create_cluster_role_binding(
            {
                "metadata": {"name": name},
                "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": name},
                "subjects": [
                    {"kind": "ServiceAccount", "name": "toy-operator", "namespace": namespace}
                ],
            }
        )
        made.append(("ClusterRoleBinding", name))
        engine.controllers = "tests.engine.toy"
        engine.kubeconfig = str(kubeconfig)
        engine.start_worker()
        engine.start_watcher()
        api.create(TOY, toy("a", namespace))
        who = f"system:serviceaccount:{namespace}:toy-operator"
        denied = (
            f'configmaps is forbidden: User "{who}" cannot create resource "configmaps" in API '
            f'group "" in the namespace "{namespace}"'
        )
        run = wait_for(
            lambda: ReconcileRun.objects.filter(namespace=namespace, name="a").first(),
            what="the run",
            timeout=60,
        )
        assert run.outcome == "permanent" and denied in run.error, run.error
        degraded = wait_for(
            lambda: condition_of(api.get(TOY, namespace, "a"), "Degraded") or None,
            what="Degraded on the Toy",
        )
        assert degraded["status"] == "True" and denied in degraded["message"], degraded
