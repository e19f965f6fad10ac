"""The same seed and the same requests give the same names, IPs and ports."""

from __future__ import annotations

import time

import pytest

from kubesim.cluster import Cluster
from kubesim.store import Store

pytestmark = pytest.mark.kubesim_only


def run_once(seed: int) -> tuple[list[str], str, int]:
    store = Store(seed=seed)
    cluster = Cluster(store, {"nodes": 3, "seed": seed, "pod_start_delay": 0.01}).start()
    try:
        deploy = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]},
                },
            },
        }
        store.create("deployments.apps", deploy)
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"type": "NodePort", "selector": {"app": "web"}, "ports": [{"port": 80}]},
        }
        created = store.create("services", service)
        deadline = time.monotonic() + 30
        while len(store.list("pods", "default")) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        pods = sorted(p["metadata"]["name"] for p in store.list("pods", "default"))
        return pods, created["spec"]["clusterIP"], created["spec"]["ports"][0]["nodePort"]
    finally:
        cluster.stop()
        store.close()


def test_a_seed_makes_pod_names_and_service_allocations_repeatable():
    first, second, other = run_once(42), run_once(42), run_once(43)

    assert len(first[0]) == 3
    assert first == second
    assert other != first
