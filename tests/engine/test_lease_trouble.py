"""What a watcher that cannot lead says: a 403 on the Lease, at start or once it leads, ends
it in one line naming the setting to change; a standby that cannot reach the API server says
why none leads."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.test import Client
from kubernetes import client

from opsboard.core.identities import write_kubeconfig
from opsboard.embedded.ports import free_port
from opsboard.mirror.models import WatcherHeartbeat
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


def _admin_kubeconfig(kubesim_server: Any) -> dict[str, Any]:
    return dict(yaml.safe_load(Path(kubesim_server.kubeconfig_path).read_text()))


def _run_as(
    engine: EngineProcesses, kubesim_server: Any, kube_api_client: client.ApiClient,
    namespace: str, account: str, tmp_path: Path,
) -> None:  # fmt: skip
    """Sets the engine to run as this ServiceAccount, using the Lease in `namespace`."""
    token = service_account_token(kube_api_client, namespace, account)
    kubeconfig = kubeconfig_with_token(
        Path(kubesim_server.kubeconfig_path), token, user=account, path=tmp_path / account
    )
    engine.kubeconfig = str(kubeconfig)
    engine.extra_env["OPSBOARD_LEASE_NAMESPACE"] = namespace


def _exit_line(engine: EngineProcesses, watcher: Any, returncode: int, marker: str) -> str:
    """Waits for the watcher to exit with `returncode` and no traceback; returns the one
    line of its log that holds `marker`."""
    wait_for(lambda: watcher.poll() is not None, what="the watcher to exit")
    log = engine.logs()
    assert watcher.returncode == returncode, log
    assert "Traceback" not in log
    [line] = [line for line in log.splitlines() if marker in line]
    return line


def test_a_403_on_the_lease_stops_the_watcher_in_one_line_naming_the_setting(
    engine: EngineProcesses,
    kube_api_client: client.ApiClient,
    kubesim_server: Any,
    namespace: str,
    tmp_path: Path,
) -> None:
    # A ServiceAccount bound to nothing.
    _run_as(engine, kubesim_server, kube_api_client, namespace, "no-grants", tmp_path)
    line = _exit_line(engine, engine.start_watcher(), 1, "OPSBOARD_LEASE_NAMESPACE")
    assert f"may not get the Lease {namespace}/opsboard-watcher" in line
    assert 'cannot get resource "leases"' in line


@pytest.fixture
def lease_holder(
    engine: EngineProcesses,
    toy_crd: None,
    kube_api_client: client.ApiClient,
    kubesim_server: Any,
    namespace: str,
    tmp_path: Path,
) -> Iterator[Callable[[], None]]:
    """The engine set to run the watcher as a ServiceAccount that may read everything and
    use the Lease through a RoleBinding; yields what takes the binding away."""
    account, reader = "lease-holder", unique("lease-holder-reads")
    rbac = client.RbacAuthorizationV1Api(kube_api_client)
    _run_as(engine, kubesim_server, kube_api_client, namespace, account, tmp_path)
    subject = {"kind": "ServiceAccount", "name": account, "namespace": namespace}
    leases = {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
              "verbs": ["get", "create", "update"]}  # fmt: skip
    read_all = {"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}
    with cluster_objects(kube_api_client) as made:
        rbac.create_cluster_role({"metadata": {"name": reader}, "rules": [read_all]})
        made.append(("ClusterRole", reader))
        rbac.create_cluster_role_binding({
            "metadata": {"name": reader}, "subjects": [subject],
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": reader},
        })  # fmt: skip
        made.append(("ClusterRoleBinding", reader))
        rbac.create_namespaced_role(namespace, {"metadata": {"name": "leases"}, "rules": [leases]})
        rbac.create_namespaced_role_binding(namespace, {
            "metadata": {"name": "leases"}, "subjects": [subject],
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "leases"},
        })  # fmt: skip
        engine.controllers = "tests.engine.toy"
        yield lambda: rbac.delete_namespaced_role_binding("leases", namespace)


def _leads() -> bool:
    return WatcherHeartbeat.objects.filter(is_leader=True).exists()


def test_a_leader_whose_grant_on_the_lease_is_taken_away_stops_in_one_line(
    engine: EngineProcesses, lease_holder: Callable[[], None], namespace: str
) -> None:
    watcher = engine.start_watcher()
    wait_for(_leads, what="the watcher to lead")
    lease_holder()
    line = _exit_line(engine, watcher, 1, "OPSBOARD_LEASE_NAMESPACE")
    assert f"may not update the Lease {namespace}/opsboard-watcher" in line
    assert not _leads()  # its heartbeat no longer claims the lead


def test_a_leader_that_may_no_longer_release_the_lease_says_so_and_stops(
    engine: EngineProcesses, lease_holder: Callable[[], None], namespace: str
) -> None:
    # Renewing once a minute, it is stopped before it learns from a renewal.
    engine.extra_env.update(
        OPSBOARD_LEASE_RETRY_PERIOD="60", OPSBOARD_LEASE_RENEW_DEADLINE="90",
        OPSBOARD_LEASE_DURATION="120",
    )  # fmt: skip
    watcher = engine.start_watcher()
    wait_for(_leads, what="the watcher to lead")
    lease_holder()
    watcher.send_signal(signal.SIGTERM)
    line = _exit_line(engine, watcher, 0, "Could not release the Lease")
    assert f"{namespace}/opsboard-watcher: PUT" in line
    assert 'cannot update resource "leases"' in line
    assert "stopped and left the lease to expire" in engine.logs()


def test_a_standby_that_cannot_reach_the_api_server_says_why_none_leads(
    engine: EngineProcesses, kubesim_server: Any, tmp_path: Path, viewer_client: Client
) -> None:
    config = _admin_kubeconfig(kubesim_server)
    for cluster in config["clusters"]:  # a port nothing listens on: the server unreachable
        cluster["cluster"]["server"] = f"https://127.0.0.1:{free_port()}"
    kubeconfig = tmp_path / "kubeconfig-unreachable"
    write_kubeconfig(kubeconfig, config)
    engine.kubeconfig = str(kubeconfig)
    engine.start_watcher()
    row = wait_for(
        lambda: WatcherHeartbeat.objects.exclude(lease_error="").first(),
        what="a standby's lease error",
    )
    assert not row.is_leader and "leases/opsboard-watcher" in row.lease_error

    html = viewer_client.get("/").content.decode()
    assert "1 running, none can take the Lease" in html
    assert "no watcher heartbeat" not in html and "The watcher is down" not in html
