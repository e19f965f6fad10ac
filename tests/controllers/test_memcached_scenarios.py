"""Memcached end to end: the engine (watcher + Celery worker) reconciling against a cluster.

Only the public API and kubectl are used, so these run unchanged against a real cluster
through OPSBOARD_TEST_KUBECONFIG.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.utils import timezone
from kubernetes import client

from controllers.base import DEPLOYMENT, EVENT, POD, Key
from controllers.conditions import condition_of, find_condition
from controllers.fields import deep_get
from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED, labels_for
from controllers.progress import PROGRESS_BATCH_SECONDS
from controllers.webserver.desired import WEBSERVER
from opsboard.engine.enqueue import reconcile_enqueue
from tests.controllers.cluster import kubectl, list_objects
from tests.controllers.runs import actions_since, run_count
from tests.kubesim.cluster.helpers import create_quota
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("running_engine")]


def _create(kube: ApiKube, namespace: str, name: str, **spec: Any) -> dict[str, Any]:
    body = {
        "apiVersion": MEMCACHED.api_version,
        "kind": MEMCACHED.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
    return kube.create(MEMCACHED, body)


def _cr(kube: ApiKube, namespace: str, name: str) -> dict[str, Any]:
    cr = kube.get(MEMCACHED, namespace, name)
    assert cr is not None
    return cr


def _pods(kube: ApiKube, namespace: str, name: str) -> list[str]:
    labels = labels_for({"metadata": {"name": name}})
    pods = list_objects(kube, POD, namespace, labels)
    return sorted(
        p["metadata"]["name"] for p in pods if not deep_get(p, "metadata.deletionTimestamp")
    )


def _settled(kube: ApiKube, namespace: str, name: str, size: int) -> dict[str, Any] | None:
    """The CR once its status says: `size` ready pods, listed in status.nodes, Available."""
    cr = _cr(kube, namespace, name)
    status = cr.get("status") or {}
    available = find_condition(status.get("conditions"), "Available") or {}
    nodes = status.get("nodes") or []
    if (
        len(nodes) == size
        and status.get("readyReplicas") == size
        and status.get("observedGeneration") == cr["metadata"]["generation"]
        and available.get("status") == "True"
        and nodes == _pods(kube, namespace, name)
    ):
        return cr
    return None


def _wait_settled(kube: ApiKube, namespace: str, name: str, size: int) -> dict[str, Any]:
    return wait_for(
        lambda: _settled(kube, namespace, name, size), what=f"{name} settled at {size} pods"
    )


def _deployment(kube: ApiKube, namespace: str, name: str) -> dict[str, Any] | None:
    return kube.get(DEPLOYMENT, namespace, name)


def test_create_makes_a_deployment_of_size_pods_listed_in_status_nodes(
    kube: ApiKube, namespace: str
) -> None:
    cr = _create(kube, namespace, "m", size=3)
    deployment = wait_for(lambda: _deployment(kube, namespace, "m"), what="Deployment m")
    assert deployment["spec"]["replicas"] == 3
    assert deployment["metadata"]["ownerReferences"][0]["uid"] == cr["metadata"]["uid"]
    settled = _wait_settled(kube, namespace, "m", 3)
    assert settled["status"]["selector"] == (
        "app.kubernetes.io/instance=m,app.kubernetes.io/managed-by=opsboard,"
        "app.kubernetes.io/name=memcached"
    )


def test_patching_size_from_3_to_5_gives_5_replicas_and_5_nodes(
    kube: ApiKube, namespace: str
) -> None:
    _create(kube, namespace, "m", size=3)
    _wait_settled(kube, namespace, "m", 3)
    kube.patch(MEMCACHED, namespace, "m", {"spec": {"size": 5}})
    _wait_settled(kube, namespace, "m", 5)
    deployment = _deployment(kube, namespace, "m")
    assert deployment is not None and deployment["spec"]["replicas"] == 5


def test_a_size_change_posts_one_event_summing_up_its_run(kube: ApiKube, namespace: str) -> None:
    """One Normal Event per run that changed the cluster, none for status writes; the
    same change again bumps that Event's count instead of adding one."""
    cr = _create(kube, namespace, "m", size=1)
    _wait_settled(kube, namespace, "m", 1)
    for size in (2, 1, 2):
        kube.patch(MEMCACHED, namespace, "m", {"spec": {"size": size}})
        _wait_settled(kube, namespace, "m", size)

    def normal() -> dict[str, int] | None:
        events = [
            e
            for e in list_objects(kube, EVENT, namespace)
            if e.get("type") == "Normal"
            and deep_get(e, "involvedObject.uid") == cr["metadata"]["uid"]
        ]
        said = {f"{e['reason']}: {e['message']}": e.get("count") for e in events}
        return said if len(said) == 3 and sum(said.values()) == 4 else None

    said = wait_for(normal, what="the Events of 4 runs that changed the Deployment")
    assert said == {
        "Created: Created Deployment m": 1,
        "Scaled: Scaled Deployment m replicas 1→2": 2,
        "Scaled: Scaled Deployment m replicas 2→1": 1,
    }


def test_a_size_change_writes_the_status_at_most_twice(kube: ApiKube, namespace: str) -> None:
    """The new generation seen, then the new pod ready: a pod still starting early in the
    rollout is not worth a write of its own (controllers.progress), yet status.nodes ends
    up listing every pod. A pod not ready once the hold is over (a loaded machine) has
    its progress written then, and only then."""
    _create(kube, namespace, "m", size=1)
    settled = _wait_settled(kube, namespace, "m", 1)
    seen: list[dict[str, Any]] = []
    seen_at: dict[str, float] = {}  # resourceVersion → when the watch delivered it
    done = threading.Event()

    def follow() -> None:
        version = settled["metadata"]["resourceVersion"]
        while not done.is_set():
            for type_, cr in kube.watch(
                MEMCACHED, namespace, resource_version=version, timeout_seconds=5
            ):
                version = cr["metadata"]["resourceVersion"]
                if type_ != "BOOKMARK" and cr["metadata"]["name"] == "m":
                    seen.append(cr)
                    seen_at[version] = time.monotonic()
                if done.is_set():
                    return

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    kube.patch(MEMCACHED, namespace, "m", {"spec": {"size": 2}})
    final = _wait_settled(kube, namespace, "m", 2)
    wait_for(
        lambda: any(c["metadata"]["resourceVersion"] == final["metadata"]["resourceVersion"]
                    for c in seen),
        what="the watch to see the settled CR",
    )  # fmt: skip
    done.set()
    status_writes = [c for c in seen if c["metadata"]["generation"] == 2][1:]  # after the patch
    at = [seen_at[c["metadata"]["resourceVersion"]] for c in status_writes]
    # The hold lasts PROGRESS_BATCH_SECONDS from a lastTransitionTime of whole seconds: 1-2 s.
    held = [t - at[0] >= PROGRESS_BATCH_SECONDS - 1 for t in at[1:-1]]
    assert len(status_writes) <= 2 or all(held), [c.get("status") for c in status_writes]
    assert final["status"]["nodes"] == _pods(kube, namespace, "m")


def test_scale_subresource_scales_the_cr(kube: ApiKube, namespace: str) -> None:
    _create(kube, namespace, "m", size=1)
    _wait_settled(kube, namespace, "m", 1)
    scale_path = kube.path(MEMCACHED, namespace, "m", "scale")
    kube.request(
        "PATCH",
        scale_path,
        body={"spec": {"replicas": 4}},
        content_type="application/merge-patch+json",
    )
    assert _cr(kube, namespace, "m")["spec"]["size"] == 4
    _wait_settled(kube, namespace, "m", 4)
    scale = kube.request("GET", scale_path)
    assert (scale["spec"]["replicas"], scale["status"]["replicas"]) == (4, 4)
    assert "app.kubernetes.io/instance=m" in scale["status"]["selector"]


def test_kubectl_scale_scales_the_cr(kube: ApiKube, namespace: str, kubesim_server: Any) -> None:
    _create(kube, namespace, "m", size=1)
    _wait_settled(kube, namespace, "m", 1)
    done = kubectl(
        kubesim_server.kubeconfig_path, "scale", "-n", namespace, "memcached/m", "--replicas=3"
    )
    assert done.returncode == 0, done.stderr
    _wait_settled(kube, namespace, "m", 3)


def test_kubectl_get_shows_the_printer_columns_and_the_opsboard_category(
    kube: ApiKube, namespace: str, kubesim_server: Any
) -> None:
    _create(kube, namespace, "m", size=2)
    _wait_settled(kube, namespace, "m", 2)
    got = kubectl(kubesim_server.kubeconfig_path, "get", "-n", namespace, "memcached")
    assert got.returncode == 0, got.stderr
    header, row = got.stdout.splitlines()
    assert header.split() == ["NAME", "SIZE", "READY", "IMAGE", "AGE"]
    assert row.split()[:4] == ["m", "2", "2", "memcached:1.4.36-alpine"]
    every = kubectl(
        kubesim_server.kubeconfig_path, "get", "-n", namespace, "opsboard", "-o", "name"
    )
    assert every.returncode == 0, every.stderr
    assert "memcached.cache.example.com/m" in every.stdout.split()


def test_an_image_change_rolls_every_pod(kube: ApiKube, namespace: str) -> None:
    _create(kube, namespace, "m", size=2)
    before = _wait_settled(kube, namespace, "m", 2)["status"]["nodes"]
    kube.patch(MEMCACHED, namespace, "m", {"spec": {"image": "memcached:1.6.21-alpine"}})

    def rolled() -> bool:
        cr = _settled(kube, namespace, "m", 2)
        progressing = condition_of(cr, "Progressing")
        return cr is not None and progressing.get("reason") == "RolloutComplete"

    wait_for(rolled, what="the rollout to complete")
    after = _cr(kube, namespace, "m")["status"]["nodes"]
    assert not set(before) & set(after)
    pods = list_objects(kube, POD, namespace, labels_for({"metadata": {"name": "m"}}))
    # Old pods may still be terminating (grace period), as on a real cluster.
    live = [pod for pod in pods if not pod["metadata"].get("deletionTimestamp")]
    assert {pod["metadata"]["name"] for pod in live} == set(after)
    for pod in live:
        assert pod["spec"]["containers"][0]["image"] == "memcached:1.6.21-alpine"


def test_a_deleted_deployment_is_restored(kube: ApiKube, namespace: str) -> None:
    _create(kube, namespace, "m", size=1)
    _wait_settled(kube, namespace, "m", 1)
    old = _deployment(kube, namespace, "m")
    assert old is not None
    kube.delete(DEPLOYMENT, namespace, "m")
    restored = wait_for(
        lambda: (
            (d := _deployment(kube, namespace, "m"))
            and d["metadata"]["uid"] != old["metadata"]["uid"]
            and d
        ),
        what="a new Deployment m",
    )
    assert restored["spec"]["replicas"] == 1


def test_deleting_the_cr_garbage_collects_its_children(kube: ApiKube, namespace: str) -> None:
    _create(kube, namespace, "m", size=2)
    _wait_settled(kube, namespace, "m", 2)
    kube.delete(MEMCACHED, namespace, "m")
    wait_for(
        lambda: _deployment(kube, namespace, "m") is None and not _pods(kube, namespace, "m"),
        what="the Deployment and pods to be garbage-collected",
    )


def test_a_missing_image_is_degraded_with_a_warning_event(kube: ApiKube, namespace: str) -> None:
    cr = _create(kube, namespace, "m", size=1, image="memcached:does-not-exist")

    def degraded() -> dict[str, Any] | None:
        status = _cr(kube, namespace, "m").get("status") or {}
        condition = find_condition(status.get("conditions"), "Degraded") or {}
        return condition if condition.get("status") == "True" else None

    condition = wait_for(degraded, what="Degraded=True")
    assert condition["reason"] == "ImagePullFailed"
    assert "memcached:does-not-exist" in condition["message"]

    def warning() -> list[dict[str, Any]]:
        return [
            e
            for e in list_objects(kube, EVENT, namespace)
            if e.get("type") == "Warning"
            and e.get("reason") == "ImagePullFailed"
            and deep_get(e, "involvedObject.uid") == cr["metadata"]["uid"]
        ]

    [event] = wait_for(warning, what="a Warning Event on the CR")
    assert "memcached:does-not-exist" in event["message"]


def _degraded(kube: ApiKube, namespace: str, name: str) -> dict[str, Any]:
    status = _cr(kube, namespace, name).get("status") or {}
    return find_condition(status.get("conditions"), "Degraded") or {}


def test_pods_a_quota_refuses_are_degraded_until_the_quota_is_raised(
    kube: ApiKube, namespace: str, kube_api_client: Any
) -> None:
    core = client.CoreV1Api(kube_api_client)
    create_quota(core, namespace, {"pods": "1"})
    _create(kube, namespace, "m", size=1)
    _wait_settled(kube, namespace, "m", 1)
    # A scale-up the quota refuses creates no pod: only the Deployment's ReplicaFailure tells.
    kube.patch(MEMCACHED, namespace, "m", {"spec": {"size": 3}})
    condition = wait_for(
        lambda: (c := _degraded(kube, namespace, "m")).get("status") == "True" and c,
        what="Degraded=True",
    )
    assert condition["reason"] == "PodsRefused"
    assert "Deployment m cannot create its pods (FailedCreate)" in condition["message"]
    assert "exceeded quota: q" in condition["message"]

    core.patch_namespaced_resource_quota("q", namespace, {"spec": {"hard": {"pods": "3"}}})
    _wait_settled(kube, namespace, "m", 3)
    wait_for(
        lambda: _degraded(kube, namespace, "m").get("status") == "False",
        what="Degraded=False once the pods are created",
    )


def test_two_crs_in_one_namespace_keep_their_own_pods(kube: ApiKube, namespace: str) -> None:
    _create(kube, namespace, "a", size=2)
    _create(kube, namespace, "b", size=3)
    a = _wait_settled(kube, namespace, "a", 2)["status"]["nodes"]
    b = _wait_settled(kube, namespace, "b", 3)["status"]["nodes"]
    assert not set(a) & set(b)
    assert len(list_objects(kube, POD, namespace)) == 5


def test_a_child_controlled_by_another_cr_is_never_taken_over(
    kube: ApiKube, namespace: str
) -> None:
    web = {"apiVersion": WEBSERVER.api_version, "kind": WEBSERVER.kind, "spec": {"replicas": 1}}
    kube.create(WEBSERVER, {**web, "metadata": {"name": "same", "namespace": namespace}})
    taken = wait_for(lambda: _deployment(kube, namespace, "same"), what="WebServer's Deployment")
    _create(kube, namespace, "same", size=3)

    def degraded() -> dict[str, Any] | None:
        status = _cr(kube, namespace, "same").get("status") or {}
        condition = find_condition(status.get("conditions"), "Degraded") or {}
        return condition if condition.get("status") == "True" else None

    condition = wait_for(degraded, what="Degraded=True")
    assert condition["reason"] == "ChildConflict"
    assert "controlled by WebServer same" in condition["message"]
    deployment = _deployment(kube, namespace, "same")
    assert deployment is not None
    assert deployment["metadata"]["ownerReferences"] == taken["metadata"]["ownerReferences"]
    assert deployment["spec"]["replicas"] == 1


def test_reconciling_a_converged_cr_again_writes_nothing(kube: ApiKube, namespace: str) -> None:
    _create(kube, namespace, "m", size=2)
    cr = _wait_settled(kube, namespace, "m", 2)
    deployment = _deployment(kube, namespace, "m")
    assert deployment is not None
    key = Key("memcached", namespace, "m")
    runs, since = run_count(key), timezone.now()
    reconcile_enqueue(key=key, trigger="manual")
    wait_for(lambda: run_count(key) > runs, what="the manual reconcile")
    assert actions_since(key, since) == []  # every write is an action in the log
    # Only the operator writes the CR (its status) and the Deployment's spec.
    assert (
        _cr(kube, namespace, "m")["metadata"]["resourceVersion"]
        == (cr["metadata"]["resourceVersion"])
    )
    again = _deployment(kube, namespace, "m")
    assert again is not None
    assert again["metadata"]["generation"] == deployment["metadata"]["generation"]
