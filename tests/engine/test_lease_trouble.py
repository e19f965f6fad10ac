"""What a watcher that cannot lead says: a 403 on the Lease ends it in one line naming the
setting to change; a standby that cannot reach the API server says why none leads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from django.test import Client
from kubernetes import client

from opsboard.core.identities import with_token as kubeconfig_with_token
from opsboard.core.identities import write_kubeconfig
from opsboard.embedded.redis import free_port
from opsboard.mirror.models import WatcherHeartbeat
from tests.fixtures.celery import EngineProcesses
from tests.kubesim.identities import service_account_token
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _admin_kubeconfig(kubesim_server: Any) -> dict[str, Any]:
    return dict(yaml.safe_load(Path(kubesim_server.kubeconfig_path).read_text()))


def test_a_403_on_the_lease_stops_the_watcher_in_one_line_naming_the_setting(
    engine: EngineProcesses,
    kube_api_client: client.ApiClient,
    kubesim_server: Any,
    namespace: str,
    tmp_path: Path,
) -> None:
    token = service_account_token(kube_api_client, namespace, "no-grants")  # bound to nothing
    kubeconfig = tmp_path / "kubeconfig-no-grants"
    config = kubeconfig_with_token(_admin_kubeconfig(kubesim_server), token, user="no-grants")
    write_kubeconfig(kubeconfig, config)
    engine.kubeconfig = str(kubeconfig)
    engine.extra_env["OPSBOARD_LEASE_NAMESPACE"] = namespace
    watcher = engine.start_watcher()
    wait_for(lambda: watcher.poll() is not None, what="the watcher to exit")
    log = engine.logs()
    assert watcher.returncode == 1, log
    assert "Traceback" not in log
    [line] = [line for line in log.splitlines() if "OPSBOARD_LEASE_NAMESPACE" in line]
    assert f"may not get the Lease {namespace}/opsboard-watcher" in line
    assert 'cannot get resource "leases"' in line


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
