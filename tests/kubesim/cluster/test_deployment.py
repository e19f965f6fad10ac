"""The Deployment and ReplicaSet controllers, through the official client."""

from __future__ import annotations

from typing import Any

from kubernetes import client, watch

from tests.kubesim.cluster.helpers import (
    ALPHABET,
    MEMCACHED_IMAGE,
    condition,
    deployment,
    events_for,
    is_ready,
    pods_of,
    schedulable_nodes,
    wait_for,
)

SELECTOR = "app=memcached,memcached_cr=memcached"


def rollout_done(
    apps: client.AppsV1Api, namespace: str, name: str, replicas: int
) -> client.V1Deployment | None:
    d = apps.read_namespaced_deployment(name, namespace)
    s = d.status
    done = (
        s.observed_generation == d.metadata.generation
        and s.updated_replicas == replicas
        and s.replicas == replicas
        and s.available_replicas == replicas
    )
    return d if done else None


def replica_sets(apps: client.AppsV1Api, namespace: str) -> list[client.V1ReplicaSet]:
    return apps.list_namespaced_replica_set(namespace).items


def test_memcached_deployment_gets_a_replica_set_and_three_running_pods(apps, core, namespace):
    apps.create_namespaced_deployment(namespace, deployment("memcached"))

    d = wait_for(lambda: rollout_done(apps, namespace, "memcached", 3), what="3 available replicas")

    [rs] = replica_sets(apps, namespace)
    pod_hash = rs.metadata.labels["pod-template-hash"]
    assert rs.metadata.name == f"memcached-{pod_hash}"
    assert rs.spec.selector.match_labels["pod-template-hash"] == pod_hash
    assert rs.metadata.annotations["deployment.kubernetes.io/revision"] == "1"
    [owner] = rs.metadata.owner_references
    assert (owner.kind, owner.name, owner.controller, owner.block_owner_deletion) == (
        "Deployment",
        "memcached",
        True,
        True,
    )
    assert (rs.status.replicas, rs.status.ready_replicas, rs.status.available_replicas) == (3, 3, 3)
    assert rs.status.fully_labeled_replicas == 3
    assert d.metadata.annotations["deployment.kubernetes.io/revision"] == "1"
    assert condition(d, "Available").reason == "MinimumReplicasAvailable"
    assert condition(d, "Progressing").reason == "NewReplicaSetAvailable"

    pods = pods_of(core, namespace, SELECTOR)
    assert len(pods) == 3
    for p in pods:
        suffix = p.metadata.name.removeprefix(f"{rs.metadata.name}-")
        assert len(suffix) == 5 and set(suffix) <= ALPHABET
        assert p.metadata.owner_references[0].uid == rs.metadata.uid
        assert p.metadata.labels["pod-template-hash"] == pod_hash
        assert p.metadata.generate_name == f"{rs.metadata.name}-"
        assert p.status.phase == "Running" and is_ready(p)
        assert p.status.pod_ip and p.status.host_ip and p.spec.node_name
        [cs] = p.status.container_statuses
        assert cs.ready and cs.started and cs.restart_count == 0
        assert MEMCACHED_IMAGE in cs.image and "@sha256:" in cs.image_id
        assert cs.state.running.started_at is not None
    if len(schedulable_nodes(core)) >= 3:
        assert len({p.spec.node_name for p in pods}) == 3


def test_scaling_up_adds_pods_to_the_same_replica_set(apps, core, namespace):
    apps.create_namespaced_deployment(namespace, deployment("memcached"))
    wait_for(lambda: rollout_done(apps, namespace, "memcached", 3), what="3 replicas")

    apps.patch_namespaced_deployment_scale("memcached", namespace, {"spec": {"replicas": 5}})

    wait_for(lambda: rollout_done(apps, namespace, "memcached", 5), what="5 replicas")
    [rs] = replica_sets(apps, namespace)
    assert rs.spec.replicas == 5
    assert len([p for p in pods_of(core, namespace, SELECTOR) if is_ready(p)]) == 5
    messages = [
        e.message
        for e in events_for(core, namespace, "memcached")
        if e.reason == "ScalingReplicaSet"
    ]
    assert f"Scaled up replica set {rs.metadata.name} to 5 from 3" in messages


def test_scaling_down_removes_pods(apps, core, namespace):
    apps.create_namespaced_deployment(namespace, deployment("memcached"))
    wait_for(lambda: rollout_done(apps, namespace, "memcached", 3), what="3 replicas")

    apps.patch_namespaced_deployment_scale("memcached", namespace, {"spec": {"replicas": 1}})

    wait_for(lambda: len(pods_of(core, namespace, SELECTOR)) == 1, what="one pod left")
    wait_for(lambda: rollout_done(apps, namespace, "memcached", 1), what="1 replica")


def test_a_new_image_rolls_out_step_by_step(apps, core, namespace):
    apps.create_namespaced_deployment(namespace, deployment("memcached", replicas=4))
    wait_for(lambda: rollout_done(apps, namespace, "memcached", 4), what="4 replicas")
    [old] = replica_sets(apps, namespace)

    patch = {
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "memcached", "image": "memcached:1.6.9-alpine"}]}
            }
        }
    }
    since = apps.list_namespaced_replica_set(namespace).metadata.resource_version
    apps.patch_namespaced_deployment("memcached", namespace, patch)

    d = wait_for(
        lambda: rollout_done(apps, namespace, "memcached", 4), what="rollout of the new image"
    )
    # Replay every ReplicaSet change of the rollout: both sets had pods at once, and there
    # were never more than replicas + maxSurge (25% of 4 = 1).
    sizes = {old.metadata.name: 4}
    seen = []
    for event in watch.Watch().stream(
        apps.list_namespaced_replica_set, namespace, resource_version=since, timeout_seconds=1
    ):
        sizes[event["object"].metadata.name] = event["object"].spec.replicas
        seen.append((sizes[old.metadata.name], sum(sizes.values()) - sizes[old.metadata.name]))
    assert any(o > 0 and n > 0 for o, n in seen)
    assert all(o + n <= 5 for o, n in seen)
    assert seen[-1] == (0, 4)
    new = next(rs for rs in replica_sets(apps, namespace) if rs.metadata.name != old.metadata.name)
    assert new.metadata.annotations["deployment.kubernetes.io/revision"] == "2"
    assert d.metadata.annotations["deployment.kubernetes.io/revision"] == "2"
    assert apps.read_namespaced_replica_set(old.metadata.name, namespace).spec.replicas == 0
    images = {
        p.spec.containers[0].image
        for p in pods_of(core, namespace, SELECTOR)
        if not p.metadata.deletion_timestamp
    }
    assert images == {"memcached:1.6.9-alpine"}
    assert condition(d, "Progressing").reason == "NewReplicaSetAvailable"
    assert (
        condition(d, "Progressing").message
        == f'ReplicaSet "{new.metadata.name}" has successfully progressed.'
    )
    messages = [
        e.message
        for e in events_for(core, namespace, "memcached")
        if e.reason == "ScalingReplicaSet"
    ]
    assert any(m.startswith(f"Scaled down replica set {old.metadata.name} to ") for m in messages)


def test_recreate_stops_every_old_pod_before_starting_new_ones(apps, core, namespace):
    apps.create_namespaced_deployment(
        namespace, deployment("memcached", replicas=2, strategy={"type": "Recreate"})
    )
    wait_for(lambda: rollout_done(apps, namespace, "memcached", 2), what="2 replicas")

    patch = {
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "memcached", "image": "memcached:1.6.9-alpine"}]}
            }
        }
    }
    since = core.list_namespaced_pod(namespace).metadata.resource_version
    apps.patch_namespaced_deployment("memcached", namespace, patch)

    wait_for(lambda: rollout_done(apps, namespace, "memcached", 2), what="recreate rollout")
    # Replay the pod changes: no pod of the new template existed while an old one did.
    alive: dict[str, str] = {}
    for event in watch.Watch().stream(
        core.list_namespaced_pod, namespace, resource_version=since, timeout_seconds=1
    ):
        p = event["object"]
        if event["type"] == "DELETED":
            alive.pop(p.metadata.name, None)
        else:
            alive[p.metadata.name] = p.metadata.labels["pod-template-hash"]
        assert len(set(alive.values())) <= 1, alive


def test_revision_history_limit_deletes_the_oldest_replica_sets(apps, namespace):
    apps.create_namespaced_deployment(
        namespace, deployment("memcached", replicas=1, revisionHistoryLimit=1)
    )
    for tag in ("1.6.8-alpine", "1.6.9-alpine"):
        wait_for(lambda: rollout_done(apps, namespace, "memcached", 1), what="rollout")
        patch = {
            "spec": {
                "template": {
                    "spec": {"containers": [{"name": "memcached", "image": f"memcached:{tag}"}]}
                }
            }
        }
        apps.patch_namespaced_deployment("memcached", namespace, patch)
    wait_for(lambda: rollout_done(apps, namespace, "memcached", 1), what="last rollout")

    wait_for(lambda: len(replica_sets(apps, namespace)) == 2, what="one old ReplicaSet kept")
    revisions = sorted(
        rs.metadata.annotations["deployment.kubernetes.io/revision"]
        for rs in replica_sets(apps, namespace)
    )
    assert revisions == ["2", "3"]


def test_replica_set_replaces_a_deleted_pod(apps, core, namespace):
    apps.create_namespaced_deployment(namespace, deployment("memcached", replicas=2))
    wait_for(lambda: rollout_done(apps, namespace, "memcached", 2), what="2 replicas")
    victim = pods_of(core, namespace, SELECTOR)[0].metadata.name

    core.delete_namespaced_pod(victim, namespace)

    def replaced() -> bool:
        pods = [p for p in pods_of(core, namespace, SELECTOR) if p.metadata.name != victim]
        return len(pods) == 2 and all(is_ready(p) for p in pods)

    wait_for(replaced, what="a replacement pod")
    [rs] = replica_sets(apps, namespace)

    def three_created() -> list[Any]:  # the controller-manager posts Events asynchronously
        events = events_for(core, namespace, rs.metadata.name)
        created = [e for e in events if e.reason == "SuccessfulCreate"]
        return created if len(created) == 3 else []

    found = wait_for(three_created, what="three SuccessfulCreate Events")
    assert all(e.message.startswith(f"Created pod: {rs.metadata.name}-") for e in found)


def test_a_paused_deployment_scales_but_does_not_roll_out(apps, namespace):
    apps.create_namespaced_deployment(namespace, deployment("memcached", replicas=1))
    wait_for(lambda: rollout_done(apps, namespace, "memcached", 1), what="1 replica")
    apps.patch_namespaced_deployment("memcached", namespace, {"spec": {"paused": True}})

    patch = {
        "spec": {
            "replicas": 2,
            "template": {
                "spec": {"containers": [{"name": "memcached", "image": "memcached:1.6.9-alpine"}]}
            },
        }
    }
    apps.patch_namespaced_deployment("memcached", namespace, patch)

    def paused() -> client.V1Deployment | None:
        d = apps.read_namespaced_deployment("memcached", namespace)
        return (
            d
            if d.status.observed_generation == d.metadata.generation
            and d.status.available_replicas == 2
            else None
        )

    d = wait_for(paused, what="scaled while paused")
    assert len(replica_sets(apps, namespace)) == 1
    assert (condition(d, "Progressing").status, condition(d, "Progressing").reason) == (
        "Unknown",
        "DeploymentPaused",
    )

    apps.patch_namespaced_deployment("memcached", namespace, {"spec": {"paused": False}})

    wait_for(lambda: rollout_done(apps, namespace, "memcached", 2), what="rollout after resume")
    assert len(replica_sets(apps, namespace)) == 2


def test_a_rollout_to_a_missing_image_keeps_the_old_pods_serving(apps, core, namespace):
    apps.create_namespaced_deployment(namespace, deployment("memcached", replicas=2))
    wait_for(lambda: rollout_done(apps, namespace, "memcached", 2), what="2 replicas")

    patch = {
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "memcached", "image": "memcached:does-not-exist"}]}
            }
        }
    }
    apps.patch_namespaced_deployment("memcached", namespace, patch)

    def stuck() -> client.V1Deployment | None:
        d = apps.read_namespaced_deployment("memcached", namespace)
        s = d.status
        return (
            d
            if s.observed_generation == d.metadata.generation
            and s.updated_replicas
            and s.unavailable_replicas
            else None
        )

    d = wait_for(stuck, what="a stuck rollout")
    assert d.status.available_replicas == 2  # maxUnavailable 25% of 2 rounds down to 0
    assert condition(d, "Available").status == "True"
    assert condition(d, "Progressing").reason in ("NewReplicaSetCreated", "ReplicaSetUpdated")
    ready = [p for p in pods_of(core, namespace, SELECTOR) if is_ready(p)]
    assert {p.spec.containers[0].image for p in ready} == {MEMCACHED_IMAGE}


def test_deleting_a_deployment_removes_its_replica_sets_and_pods(apps, core, namespace):
    apps.create_namespaced_deployment(namespace, deployment("memcached", replicas=2))
    wait_for(lambda: rollout_done(apps, namespace, "memcached", 2), what="2 replicas")

    apps.delete_namespaced_deployment("memcached", namespace)

    wait_for(lambda: not replica_sets(apps, namespace), what="the ReplicaSet collected")
    wait_for(lambda: not pods_of(core, namespace, SELECTOR), what="the pods gone")


def test_a_recreated_deployment_adopts_what_an_orphaning_delete_left(apps, core, namespace):
    apps.create_namespaced_deployment(namespace, deployment("memcached", replicas=2))
    wait_for(lambda: rollout_done(apps, namespace, "memcached", 2), what="2 replicas")
    [rs] = replica_sets(apps, namespace)
    pods = {p.metadata.name for p in pods_of(core, namespace, SELECTOR)}

    apps.delete_namespaced_deployment("memcached", namespace, propagation_policy="Orphan")
    wait_for(
        lambda: (
            not apps.read_namespaced_replica_set(
                rs.metadata.name, namespace
            ).metadata.owner_references
        ),
        what="the ReplicaSet orphaned",
    )

    def deployment_gone() -> bool:  # the garbage collector drops its orphan finalizer last
        try:
            apps.read_namespaced_deployment("memcached", namespace)
        except client.ApiException as exc:
            return exc.status == 404
        return False

    wait_for(deployment_gone, what="the Deployment deleted")
    created = apps.create_namespaced_deployment(namespace, deployment("memcached", replicas=2))

    def adopted() -> bool:
        refs = (
            apps.read_namespaced_replica_set(rs.metadata.name, namespace).metadata.owner_references
            or []
        )
        return [r.uid for r in refs if r.controller] == [created.metadata.uid]

    wait_for(adopted, what="the ReplicaSet adopted")
    wait_for(lambda: rollout_done(apps, namespace, "memcached", 2), what="2 replicas")
    assert [r.metadata.name for r in replica_sets(apps, namespace)] == [rs.metadata.name]
    assert {p.metadata.name for p in pods_of(core, namespace, SELECTOR)} == pods


def test_a_stuck_rollout_exceeds_its_progress_deadline(apps, namespace):
    body = deployment(
        "memcached", replicas=1, image="memcached:does-not-exist", progressDeadlineSeconds=1
    )
    apps.create_namespaced_deployment(namespace, body)

    def exceeded():
        cond = condition(apps.read_namespaced_deployment("memcached", namespace), "Progressing")
        return cond if cond is not None and cond.reason == "ProgressDeadlineExceeded" else None

    cond = wait_for(exceeded, what="ProgressDeadlineExceeded")
    assert cond.status == "False"
    assert cond.message.endswith("has timed out progressing.")
