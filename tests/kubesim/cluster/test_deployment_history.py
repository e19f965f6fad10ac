"""A Deployment's history as `kubectl rollout history` and `rollout undo` read it: the
controller copies the Deployment's annotations (its change-cause) to the new ReplicaSet,
and a ReplicaSet that comes back by a rollback keeps its former revisions."""

from __future__ import annotations

from kubernetes import client

from tests.kubesim.conftest import Kubectl
from tests.kubesim.support import wait_for

CAUSE = "kubernetes.io/change-cause"
REVISION = "deployment.kubernetes.io/revision"
HISTORY = "deployment.kubernetes.io/revision-history"


def _annotations_by_image(apps: client.AppsV1Api, namespace: str) -> dict[str, dict[str, str]]:
    return {
        rs.spec.template.spec.containers[0].image: rs.metadata.annotations or {}
        for rs in apps.list_namespaced_replica_set(namespace).items
    }


def test_rollout_history_shows_each_change_cause_and_undo_restores_it(
    apps: client.AppsV1Api, namespace: str, kubectl: Kubectl
) -> None:
    def run(*args: str) -> str:
        return kubectl(*args, namespace=namespace).stdout

    old, new = "nginx:1.23.1", "nginx:1.25.3"
    run("create", "deployment", "web", f"--image={old}")
    run("annotate", "deploy/web", f"{CAUSE}=create", "team=a")
    wanted = {CAUSE: "create", "team": "a", REVISION: "1"}
    wait_for(
        lambda: _annotations_by_image(apps, namespace).get(old, {}).items() >= wanted.items(),
        what="the first ReplicaSet to carry the Deployment's annotations",
    )
    run("set", "image", "deploy/web", f"nginx={new}")
    run("annotate", "--overwrite", "deploy/web", f"{CAUSE}=bump")
    wanted = {CAUSE: "bump", "team": "a", REVISION: "2"}
    wait_for(
        lambda: _annotations_by_image(apps, namespace).get(new, {}).items() >= wanted.items(),
        what="the second ReplicaSet to carry the new change-cause",
    )
    assert _annotations_by_image(apps, namespace)[old][CAUSE] == "create"
    run("rollout", "status", "deploy/web", "--timeout=55s")
    assert run("rollout", "history", "deploy/web").splitlines()[1:4] == [
        "REVISION  CHANGE-CAUSE",
        "1         create",
        "2         bump",
    ]

    assert run("rollout", "undo", "deploy/web") == "deployment.apps/web rolled back\n"
    wanted = {CAUSE: "create", REVISION: "3", HISTORY: "1"}
    wait_for(
        lambda: _annotations_by_image(apps, namespace).get(old, {}).items() >= wanted.items(),
        what="the first ReplicaSet to come back as revision 3, remembering revision 1",
    )
    d = apps.read_namespaced_deployment("web", namespace)
    assert d.metadata.annotations[CAUSE] == "create"  # kubectl copied the set's annotations
    run("rollout", "status", "deploy/web", "--timeout=55s")
    assert run("rollout", "history", "deploy/web").splitlines()[1:4] == [
        "REVISION  CHANGE-CAUSE",
        "2         bump",
        "3         create",
    ]
    run("rollout", "undo", "deploy/web")
    wanted = {CAUSE: "bump", REVISION: "4", HISTORY: "2"}
    wait_for(
        lambda: _annotations_by_image(apps, namespace).get(new, {}).items() >= wanted.items(),
        what="the second ReplicaSet to come back as revision 4, remembering revision 2",
    )
