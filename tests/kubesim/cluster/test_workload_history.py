"""StatefulSet and DaemonSet history, as `kubectl rollout history|undo` reads it: the
ControllerRevisions their controllers keep, one per pod template."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from tests.kubesim.cluster.helpers import daemonset, statefulset, wait_for
from tests.kubesim.conftest import Kubectl

OLD, NEW = "nginx:1.23.1", "nginx:1.25.3"
HASH_LABELS = {
    "statefulset": "controller.kubernetes.io/hash",
    "daemonset": "controller-revision-hash",
}


def _manifest(kind: str) -> dict[str, Any]:
    if kind == "statefulset":
        obj = statefulset("db", replicas=1, image=OLD)
        del obj["spec"]["volumeClaimTemplates"]
    else:
        obj = daemonset("db")
        obj["spec"]["template"]["spec"]["containers"][0] |= {"name": "web", "image": OLD}
    return obj


def _revisions(apps: client.AppsV1Api, namespace: str) -> list[tuple[int, str, str]]:
    """(revision, name, image) of each ControllerRevision, oldest first."""
    found = apps.list_namespaced_controller_revision(namespace).items
    return sorted(
        (r.revision, r.metadata.name, r.data["spec"]["template"]["spec"]["containers"][0]["image"])
        for r in found
    )


@pytest.mark.parametrize("kind", ["statefulset", "daemonset"])
def test_rollout_history_and_undo(
    apps: client.AppsV1Api, namespace: str, kubectl: Kubectl, kind: str
) -> None:
    def run(*args: str) -> str:
        return kubectl(*args, namespace=namespace).stdout

    obj = _manifest(kind)
    created = (
        apps.create_namespaced_stateful_set(namespace, obj)
        if kind == "statefulset"
        else apps.create_namespaced_daemon_set(namespace, obj)
    )
    run("rollout", "status", f"{kind}/db", "--timeout=55s")
    run("set", "image", f"{kind}/db", f"web={NEW}")
    run("rollout", "status", f"{kind}/db", "--timeout=55s")
    assert run("rollout", "history", f"{kind}/db").splitlines()[1:4] == [
        "REVISION  CHANGE-CAUSE",
        "1         <none>",
        "2         <none>",
    ]
    first, second = wait_for(
        lambda: len(found := _revisions(apps, namespace)) == 2 and found,
        what="two ControllerRevisions",
    )
    assert (first[0], first[2], second[0], second[2]) == (1, OLD, 2, NEW)
    revision = apps.read_namespaced_controller_revision(first[1], namespace)
    template_hash = revision.metadata.labels[HASH_LABELS[kind]]
    assert revision.metadata.name == f"db-{template_hash}"
    assert revision.metadata.labels["app"] == "db"
    [owner] = revision.metadata.owner_references
    assert (owner.uid, owner.controller) == (created.metadata.uid, True)
    assert revision.data["spec"]["template"]["$patch"] == "replace"
    assert f"Image:\t{OLD}" in run("rollout", "history", f"{kind}/db", "--revision=1")

    assert run("rollout", "undo", f"{kind}/db") == f"{kind}.apps/db rolled back\n"
    # The old template comes back: its revision becomes the newest, no third one is made.
    wait_for(
        lambda: _revisions(apps, namespace) == [(2, second[1], NEW), (3, first[1], OLD)],
        what="the first revision to become revision 3",
    )
    run("rollout", "status", f"{kind}/db", "--timeout=55s")
    assert run("rollout", "history", f"{kind}/db").splitlines()[1:4] == [
        "REVISION  CHANGE-CAUSE",
        "2         <none>",
        "3         <none>",
    ]
