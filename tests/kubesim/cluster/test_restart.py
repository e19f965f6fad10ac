"""A restarted kubesim picks its cluster up where it was: no churn, same pods and IPs."""

from __future__ import annotations

import pytest
from kubernetes import client, config

from kubesim.server import KubeSim
from tests.kubesim.cluster.helpers import deployment, is_ready, wait_for

pytestmark = pytest.mark.kubesim_only


def start(data_dir, kubeconfig) -> tuple[KubeSim, client.ApiClient]:
    sim = KubeSim(data_dir=data_dir, seed=7, pod_start_delay=0.05).start()
    sim.write_kubeconfig(kubeconfig)
    return sim, config.new_client_from_config(config_file=str(kubeconfig))


def snapshot(api: client.ApiClient) -> dict[str, tuple[str, str, int]]:
    pods = client.CoreV1Api(api).list_namespaced_pod("default").items
    return {
        p.metadata.name: (
            p.metadata.uid,
            p.status.pod_ip,
            p.status.container_statuses[0].restart_count,
        )
        for p in pods
        if is_ready(p)
    }


def test_running_pods_survive_a_restart_unchanged(tmp_path):
    sim, api = start(tmp_path / "data", tmp_path / "kubeconfig")
    try:
        apps = client.AppsV1Api(api)
        apps.create_namespaced_deployment("default", deployment("memcached", replicas=3))
        wait_for(lambda: len(snapshot(api)) == 3, what="3 ready pods")
        sim.cluster.crash_pod("default", next(iter(snapshot(api))))
        wait_for(
            lambda: len(snapshot(api)) == 3 and any(r for _, _, r in snapshot(api).values()),
            what="a restart",
        )
        before = snapshot(api)
    finally:
        api.close()
        sim.stop()

    sim, api = start(tmp_path / "data", tmp_path / "kubeconfig")
    try:
        after = wait_for(
            lambda: len(s := snapshot(api)) == 3 and s, what="3 ready pods after the restart"
        )
        assert after == before
        d = client.AppsV1Api(api).read_namespaced_deployment("memcached", "default")
        assert d.status.available_replicas == 3
        assert len(client.AppsV1Api(api).list_namespaced_replica_set("default").items) == 1
        nodes = [n.metadata.name for n in client.CoreV1Api(api).list_node().items]
        assert sorted(nodes) == ["kubesim-node-1", "kubesim-node-2", "kubesim-node-3"]
    finally:
        api.close()
        sim.stop()
