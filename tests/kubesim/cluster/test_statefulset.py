"""The StatefulSet controller, its claims, and volume expansion."""

from __future__ import annotations

import pytest
from kubernetes import client

from tests.kubesim.cluster.helpers import condition, is_ready, statefulset, wait_for


def settled(
    apps: client.AppsV1Api, namespace: str, name: str, replicas: int
) -> client.V1StatefulSet | None:
    sts = apps.read_namespaced_stateful_set(name, namespace)
    s = sts.status
    done = (
        s.observed_generation == sts.metadata.generation
        and s.ready_replicas == replicas
        and s.updated_replicas == replicas
        and s.current_revision == s.update_revision
    )
    return sts if done else None


def test_ordinal_pods_with_claims_from_the_templates(apps, core, namespace):
    apps.create_namespaced_stateful_set(namespace, statefulset("web"))

    sts = wait_for(lambda: settled(apps, namespace, "web", 3), what="3 ready replicas")

    pods = {
        p.metadata.name: p
        for p in core.list_namespaced_pod(namespace, label_selector="app=web").items
    }
    assert set(pods) == {"web-0", "web-1", "web-2"}
    assert all(is_ready(p) for p in pods.values())
    assert {p.metadata.labels["controller-revision-hash"] for p in pods.values()} == {
        sts.status.update_revision
    }
    # OrderedReady: each pod started after the one before it was Ready.
    starts = [
        pods[f"web-{i}"].status.container_statuses[0].state.running.started_at for i in range(3)
    ]
    assert starts == sorted(starts)
    claims = {
        c.metadata.name: c for c in core.list_namespaced_persistent_volume_claim(namespace).items
    }
    assert set(claims) == {"data-web-0", "data-web-1", "data-web-2"}
    for claim in claims.values():
        assert claim.status.phase == "Bound"
        assert claim.status.capacity["storage"] == "1Gi"
        volume = core.read_persistent_volume(claim.spec.volume_name)
        assert volume.spec.claim_ref.name == claim.metadata.name
    volumes = {v.name: v for v in pods["web-1"].spec.volumes}
    assert volumes["data"].persistent_volume_claim.claim_name == "data-web-1"
    assert sts.status.replicas == 3 and sts.status.current_replicas == 3


def test_parallel_pods_and_scale_down_from_the_highest_ordinal(apps, core, namespace):
    apps.create_namespaced_stateful_set(namespace, statefulset("par", policy="Parallel"))
    wait_for(lambda: settled(apps, namespace, "par", 3), what="3 ready replicas")

    apps.patch_namespaced_stateful_set_scale("par", namespace, {"spec": {"replicas": 1}})

    def names() -> set[str]:
        return {
            p.metadata.name
            for p in core.list_namespaced_pod(namespace, label_selector="app=par").items
        }

    wait_for(lambda: names() == {"par-0"}, what="only par-0 left")
    # Claims stay (whenScaled: Retain), as on a real cluster.
    assert len(core.list_namespaced_persistent_volume_claim(namespace).items) == 3


def test_rolling_update_replaces_pods_from_the_highest_ordinal(apps, core, namespace):
    apps.create_namespaced_stateful_set(namespace, statefulset("roll"))
    first = wait_for(lambda: settled(apps, namespace, "roll", 3), what="3 ready replicas")

    patch = {
        "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.26"}]}}}
    }
    apps.patch_namespaced_stateful_set("roll", namespace, patch)

    order: list[str] = []

    def progress() -> client.V1StatefulSet | None:
        for p in core.list_namespaced_pod(namespace, label_selector="app=roll").items:
            if p.spec.containers[0].image == "nginx:1.26" and p.metadata.name not in order:
                order.append(p.metadata.name)
        return settled(apps, namespace, "roll", 3)

    done = wait_for(progress, what="rolling update")
    assert order == ["roll-2", "roll-1", "roll-0"]
    assert done.status.update_revision != first.status.update_revision
    assert done.status.current_revision == done.status.update_revision


@pytest.mark.kubesim_only
def test_expanding_a_claim_waits_for_the_pod_to_restart(apps, core, namespace):
    apps.create_namespaced_stateful_set(namespace, statefulset("db", replicas=1))
    wait_for(lambda: settled(apps, namespace, "db", 1), what="1 ready replica")
    old_uid = core.read_namespaced_pod("db-0", namespace).metadata.uid

    core.patch_namespaced_persistent_volume_claim(
        "data-db-0", namespace, {"spec": {"resources": {"requests": {"storage": "2Gi"}}}}
    )

    pending = wait_for(
        lambda: (
            condition(
                c := core.read_namespaced_persistent_volume_claim("data-db-0", namespace),
                "FileSystemResizePending",
            )
            and c
        ),
        what="FileSystemResizePending",
    )
    assert pending.status.capacity["storage"] == "1Gi"
    assert core.read_persistent_volume(pending.spec.volume_name).spec.capacity["storage"] == "2Gi"

    core.delete_namespaced_pod("db-0", namespace)

    def restarted() -> bool:
        try:
            p = core.read_namespaced_pod("db-0", namespace)
        except client.ApiException:
            return False
        return p.metadata.uid != old_uid and is_ready(p)

    wait_for(restarted, what="db-0 back")
    claim = wait_for(
        lambda: (
            (
                c := core.read_namespaced_persistent_volume_claim("data-db-0", namespace)
            ).status.capacity["storage"]
            == "2Gi"
            and c
        ),
        what="capacity 2Gi",
    )
    assert condition(claim, "FileSystemResizePending") is None


@pytest.mark.kubesim_only
def test_the_default_storage_class_allows_expansion(kube_api_client):
    storage = client.StorageV1Api(kube_api_client)

    sc = storage.read_storage_class("standard")

    assert sc.allow_volume_expansion is True
    assert sc.metadata.annotations["storageclass.kubernetes.io/is-default-class"] == "true"


def test_claims_go_with_the_set_when_the_retention_policy_says_delete(apps, core, namespace):
    body = statefulset("tmp", replicas=1)
    body["spec"]["persistentVolumeClaimRetentionPolicy"] = {
        "whenDeleted": "Delete",
        "whenScaled": "Retain",
    }
    apps.create_namespaced_stateful_set(namespace, body)
    wait_for(lambda: settled(apps, namespace, "tmp", 1), what="1 ready replica")

    apps.delete_namespaced_stateful_set("tmp", namespace)

    wait_for(
        lambda: not core.list_namespaced_persistent_volume_claim(namespace).items,
        what="claims deleted",
    )


def test_a_headless_service_names_the_ordinal_pods_in_its_endpoints(apps, core, namespace):
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "db"},
        "spec": {"clusterIP": "None", "selector": {"app": "db"}, "ports": [{"port": 80}]},
    }
    created = core.create_namespaced_service(namespace, service)
    assert created.spec.cluster_ip == "None"
    apps.create_namespaced_stateful_set(namespace, statefulset("db", replicas=2))
    wait_for(lambda: settled(apps, namespace, "db", 2), what="2 ready replicas")

    def hostnames() -> set[str]:
        ep = core.read_namespaced_endpoints("db", namespace)
        return {a.hostname for s in ep.subsets or [] for a in s.addresses or []}

    wait_for(lambda: hostnames() == {"db-0", "db-1"}, what="hostnames in the endpoints")
