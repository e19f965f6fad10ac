"""The engine run as a ServiceAccount that lacks one grant, as a cluster install runs it: the
403 names the verb and resource in the run log and in the CR's Degraded condition, and the
refused run is tried again, slowly, so a grant takes effect on its own; a kind the watcher
may not list is said once, and watched once it is granted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from controllers.conditions import condition_of
from controllers.kube import ApiKube
from opsboard.engine.models import ReconcileRun
from opsboard.mirror.models import KubeObject
from tests.engine.toy import TOY, child_size, toy
from tests.fixtures.celery import EngineProcesses
from tests.kubesim.identities import (
    cluster_objects,
    kubeconfig_with_token,
    service_account_token,
    unique,
)
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
# The toy operator's rights but listing and watching its ConfigMaps, and the grant of those.
READ = ["get", "list", "watch"]
RULES_BLIND = [
    {"apiGroups": ["test.opsboard.dev"], "resources": ["toys"], "verbs": READ},
    {"apiGroups": ["apps"], "resources": ["replicasets"], "verbs": READ},
    {"apiGroups": [""], "resources": ["events"], "verbs": [*READ, "create", "patch"]},
    {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]},
    {"apiGroups": ["test.opsboard.dev"], "resources": ["toys/status"], "verbs": ["patch"]},
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "create", "patch"]},
    {
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
        "verbs": ["get", "create", "update"],
    },
]
RULES_CREATE = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}]
RULES_SEE = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list", "watch"]}]


def _kubeconfig_of(
    kube_api_client: client.ApiClient, kubesim_server: Any, namespace: str, tmp_path: Path
) -> Path:
    token = service_account_token(kube_api_client, namespace, "toy-operator")
    return kubeconfig_with_token(
        Path(kubesim_server.kubeconfig_path),
        token,
        user="toy-operator",
        path=tmp_path / "kubeconfig-toy-operator",
    )


def _grant(
    rbac: client.RbacAuthorizationV1Api,
    made: list[tuple[str, str]],
    name: str,
    rules: list[dict[str, Any]],
    namespace: str,
) -> None:
    rbac.create_cluster_role({"metadata": {"name": name}, "rules": rules})
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


def _start_toy_operator(engine: EngineProcesses, kubeconfig: Path) -> None:
    """The toy operator as the ServiceAccount, looking again at a refusal every 0.5 s."""
    engine.controllers = "tests.engine.toy"
    engine.kubeconfig = str(kubeconfig)
    engine.extra_env["OPSBOARD_DENIED_RETRY"] = "0.5"
    engine.start_worker()
    engine.start_watcher()


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
    kubeconfig = _kubeconfig_of(kube_api_client, kubesim_server, namespace, tmp_path)
    with cluster_objects(kube_api_client) as made:
        _grant(rbac, made, name, RULES, namespace)
        _start_toy_operator(engine, kubeconfig)
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
        assert run.outcome == "error" and denied in run.error, run.error
        degraded = wait_for(
            lambda: condition_of(api.get(TOY, namespace, "a"), "Degraded") or None,
            what="Degraded on the Toy",
        )
        assert degraded["status"] == "True" and denied in degraded["message"], degraded

        # Granted, and nothing else: no change of the Toy, no Reconcile now. The refused
        # run is tried again after OPSBOARD_DENIED_RETRY, then less often.
        _grant(rbac, made, f"{name}-create", RULES_CREATE, namespace)
        wait_for(
            lambda: child_size(api, namespace, "a") == "1",
            what="the ConfigMap created once granted",
            timeout=60,
        )
        runs = ReconcileRun.objects.filter(namespace=namespace, name="a")
        created = wait_for(
            lambda: runs.filter(outcome="success").order_by("started_at").first(),
            what="the successful run recorded",
        )
        assert created.trigger == "retry", (created.trigger, created.trigger_detail)


def test_a_kind_the_watcher_may_not_list_is_said_once_and_watched_once_granted(
    engine: EngineProcesses,
    toy_crd: None,
    api: ApiKube,
    kube_api_client: client.ApiClient,
    kubesim_server: Any,
    namespace: str,
    tmp_path: Path,
) -> None:
    name = unique("toy-operator-blind")
    rbac = client.RbacAuthorizationV1Api(kube_api_client)
    with cluster_objects(kube_api_client) as made:
        _grant(rbac, made, name, RULES_BLIND, namespace)
        _start_toy_operator(
            engine, _kubeconfig_of(kube_api_client, kubesim_server, namespace, tmp_path)
        )
        api.create(TOY, toy("a", namespace))
        wait_for(
            lambda: ReconcileRun.objects.filter(namespace=namespace, name="a").exists(),
            what="the Toy reconciled, its other kinds watched",
            timeout=60,
        )
        logs = _whole_logs(engine)
        # Once, though looked at again every 0.5 s ("in namespace …" where the engine
        # watches the test's namespace alone, as on a real cluster).
        assert logs.count("Cannot watch ConfigMap") == 1, logs
        assert "so it is not mirrored and its changes wake no reconcile" in logs
        who = f"system:serviceaccount:{namespace}:toy-operator"
        assert f'User "{who}" cannot list resource "configmaps"' in logs
        assert "Grant this identity list and watch on configmaps" in logs
        # The Toy ran without its keys held for a list that cannot come (SYNC_WAIT's end).
        assert "Not listed after" not in logs
        mirrored = KubeObject.objects.filter(kind="ConfigMap", namespace=namespace, name="a")
        assert not mirrored.exists()

        _grant(rbac, made, f"{name}-see", RULES_SEE, namespace)

        wait_for(mirrored.exists, what="the Toy's ConfigMap mirrored once granted", timeout=60)
        logs = _whole_logs(engine)
        assert "Watching ConfigMap" in logs and ": it may be listed now" in logs, logs


def _whole_logs(engine: EngineProcesses) -> str:
    return "".join(path.read_text() for path in sorted(engine.tmp.glob("*.log")))
