"""WebServer end to end: a Deployment and a NodePort Service per CR, healed through watches.

Only the public API is used, so these run unchanged against a real cluster through
OPSBOARD_TEST_KUBECONFIG.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.utils import timezone

from controllers.base import DEPLOYMENT, EVENT, POD, SERVICE, Key
from controllers.conditions import condition_of, find_condition
from controllers.fields import deep_get, node_port
from controllers.kube import ApiKube
from controllers.webserver.desired import PORT_NAME, WEBSERVER, labels_for
from opsboard.engine.models import ReconcileRun
from tests.controllers.cluster import list_objects
from tests.controllers.runs import actions_since
from tests.fixtures.celery import EngineProcesses
from tests.fixtures.kubesim import KubesimHandle
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("running_engine")]


def _create(kube: ApiKube, namespace: str, name: str, **spec: Any) -> dict[str, Any]:
    body = {
        "apiVersion": WEBSERVER.api_version,
        "kind": WEBSERVER.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
    return kube.create(WEBSERVER, body)


def _settled(kube: ApiKube, namespace: str, name: str, replicas: int) -> dict[str, Any] | None:
    """The CR once its status says: `replicas` ready pods, its Service and nodePort, Available."""
    cr = kube.get(WEBSERVER, namespace, name)
    status = (cr or {}).get("status") or {}
    available = find_condition(status.get("conditions"), "Available") or {}
    pods = list_objects(kube, POD, namespace, labels_for({"metadata": {"name": name}}))
    live = sorted(
        p["metadata"]["name"] for p in pods if not deep_get(p, "metadata.deletionTimestamp")
    )
    if (
        cr is not None
        and status.get("observedGeneration") == cr["metadata"]["generation"]
        and status.get("readyReplicas") == replicas
        and status.get("nodes") == live
        and len(live) == replicas
        and status.get("nodePort")
        and available.get("status") == "True"
    ):
        return cr
    return None


def _wait_settled(kube: ApiKube, namespace: str, name: str, replicas: int) -> dict[str, Any]:
    return wait_for(
        lambda: _settled(kube, namespace, name, replicas), what=f"{name} settled at {replicas}"
    )


def test_create_makes_a_deployment_and_a_node_port_service(kube: ApiKube, namespace: str) -> None:
    cr = _create(kube, namespace, "web", replicas=3)
    settled = _wait_settled(kube, namespace, "web", 3)
    deployment = kube.get(DEPLOYMENT, namespace, "web")
    service = kube.get(SERVICE, namespace, "web-service")
    assert deployment is not None and service is not None
    assert deployment["spec"]["replicas"] == 3
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.23.1"
    assert service["spec"]["type"] == "NodePort"
    assert service["metadata"]["ownerReferences"][0]["uid"] == cr["metadata"]["uid"]
    assert settled["status"]["serviceName"] == "web-service"
    assert settled["status"]["nodePort"] == service["spec"]["ports"][0]["nodePort"]


def _unused_node_port(kube: ApiKube) -> int:
    """A nodePort no Service in the cluster holds (a real cluster may be shared)."""
    services, _ = kube.list(SERVICE)
    taken = {p.get("nodePort") for s in services for p in s["spec"].get("ports", [])}
    return random.choice([p for p in range(30000, 32768) if p not in taken])


def test_many_webservers_get_their_own_node_ports(kube: ApiKube, namespace: str) -> None:
    port = _unused_node_port(kube)
    _create(kube, namespace, "b", replicas=1, nodePort=port)
    b = _wait_settled(kube, namespace, "b", 1)["status"]  # before "a" is given a port
    _create(kube, namespace, "a", replicas=1)
    a = _wait_settled(kube, namespace, "a", 1)["status"]
    assert b["nodePort"] == port
    assert a["nodePort"] != b["nodePort"]
    assert not set(a["nodes"]) & set(b["nodes"])


def _node_port(service: dict[str, Any] | None) -> int | None:
    return node_port(service, PORT_NAME)


def _recreated(kube: ApiKube, namespace: str, old: dict[str, Any]) -> dict[str, Any]:
    name = old["metadata"]["name"]
    return wait_for(
        lambda: (
            (s := kube.get(SERVICE, namespace, name))
            and s["metadata"]["uid"] != old["metadata"]["uid"]
            and s
        ),
        what=f"a new Service {name}",
    )


def test_a_deleted_service_is_restored_with_its_node_port(kube: ApiKube, namespace: str) -> None:
    """Whoever uses http://node:PORT keeps it: the new Service asks for the old port."""
    _create(kube, namespace, "web", replicas=1)
    port = _wait_settled(kube, namespace, "web", 1)["status"]["nodePort"]
    old = kube.get(SERVICE, namespace, "web-service")
    kube.delete(SERVICE, namespace, "web-service")
    assert _node_port(_recreated(kube, namespace, old)) == port
    assert _wait_settled(kube, namespace, "web", 1)["status"]["nodePort"] == port


def test_a_deleted_services_node_port_taken_meanwhile_is_replaced_saying_so(
    kube: ApiKube, namespace: str, engine: EngineProcesses
) -> None:
    """Another Service takes the port while the workers are down (a rollout, say): the
    Service comes back with a port the cluster allocates, and the run log and a Warning
    Event on the CR say which port was lost and which it has now."""
    cr = _create(kube, namespace, "web", replicas=1)
    port = _wait_settled(kube, namespace, "web", 1)["status"]["nodePort"]
    old = kube.get(SERVICE, namespace, "web-service")
    engine.stop_workers()
    kube.delete(SERVICE, namespace, "web-service")
    kube.create(SERVICE, {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "taker", "namespace": namespace},
        "spec": {"type": "NodePort", "selector": {"app": "other"},
                 "ports": [{"port": 80, "targetPort": 80, "nodePort": port}]},
    })  # fmt: skip
    started = timezone.now()
    engine.restart_exited_workers()

    new_port = _node_port(_recreated(kube, namespace, old))
    assert new_port is not None and new_port != port
    wait_for(
        lambda: deep_get(kube.get(WEBSERVER, namespace, "web"), "status.nodePort") == new_port,
        what="the CR's status to report the new port",
    )
    said = (
        f"Allocated NodePort {new_port} to Service web-service: its previous NodePort {port} "
        "is in use by another Service"
    )
    wait_for(  # the run's log is written as it ends, after its writes
        lambda: said in actions_since(Key("webserver", namespace, "web"), started),
        what=f"the run log to say {said!r}",
    )
    [warning] = wait_for(
        lambda: [
            e
            for e in list_objects(kube, EVENT, namespace)
            if deep_get(e, "involvedObject.uid") == cr["metadata"]["uid"]
            and e["reason"] == "NodePortChanged"
        ],
        what="the NodePortChanged Event",
    )
    assert warning["type"] == "Warning"
    assert f"http://<node>:{port} no longer reaches this WebServer" in warning["message"]
    assert f"Use port {new_port}" in warning["message"]


@pytest.mark.kubesim_only
def test_a_port_refused_while_its_holder_was_going_is_asked_for_again(
    kube: ApiKube, namespace: str, engine: EngineProcesses, kubesim_server: KubesimHandle
) -> None:
    """The create asking for the old port is refused while its holder still stands (seen
    on the real server: the Service itself, deleted a moment after a run found it missing
    from a mirror not yet showing it), and the holder is gone when the refusal is looked
    into. The port is asked for once more, and kept, before the cluster allocates another."""
    _create(kube, namespace, "web", replicas=1)
    port = _wait_settled(kube, namespace, "web", 1)["status"]["nodePort"]
    old = kube.get(SERVICE, namespace, "web-service")
    engine.stop_workers()
    kube.delete(SERVICE, namespace, "web-service")
    refusal = kubesim_server.add_error(
        422, verb="create", resource="services", namespace=namespace, count=1,
        message=f'Service "web-service" is invalid: spec.ports[0].nodePort: Invalid value: '
        f"{port}: provided port is already allocated",
    )  # fmt: skip
    engine.restart_exited_workers()

    assert _node_port(_recreated(kube, namespace, old)) == port
    assert refusal.hits == 1, "the first create was the refused one"
    assert _wait_settled(kube, namespace, "web", 1)["status"]["nodePort"] == port
    reasons = {e["reason"] for e in list_objects(kube, EVENT, namespace)}
    assert "NodePortChanged" not in reasons


def test_deleting_an_unowned_child_it_could_not_adopt_wakes_the_cr(
    kube: ApiKube, namespace: str
) -> None:
    """A Deployment made by hand in the CR's name, with a selector (immutable) that is not
    the operator's: its adoption is refused, which is not retried. Its deletion, a change of
    an object with no owner, wakes the CR that expects it by name (no resync runs here)."""
    labels = {"app": "squatter"}
    kube.create(DEPLOYMENT, {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace, "labels": labels},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:1.23.1"}]}}},
    })  # fmt: skip
    cr = _create(kube, namespace, "web", replicas=1)
    wait_for(
        lambda: ReconcileRun.objects.filter(
            namespace=namespace, name="web", outcome="permanent", error__contains="immutable"
        ).exists(),
        what="the adoption of the Deployment refused",
    )
    kube.delete(DEPLOYMENT, namespace, "web")

    def ours() -> dict[str, Any] | None:
        deployment = kube.get(DEPLOYMENT, namespace, "web") or {}
        refs = deep_get(deployment, "metadata.ownerReferences") or []
        return deployment if [r["uid"] for r in refs] == [cr["metadata"]["uid"]] else None

    wait_for(ours, what="the WebServer's own Deployment web")
    _wait_settled(kube, namespace, "web", 1)


def test_an_edited_service_is_corrected(kube: ApiKube, namespace: str) -> None:
    _create(kube, namespace, "web", replicas=1)
    _wait_settled(kube, namespace, "web", 1)
    kube.patch(
        SERVICE,
        namespace,
        "web-service",
        {"metadata": {"annotations": {"team": "web"}}, "spec": {"selector": {"app": "other"}}},
    )

    def corrected() -> dict[str, Any] | None:
        service = kube.get(SERVICE, namespace, "web-service") or {}
        selector = deep_get(service, "spec.selector", {})
        return service if selector == labels_for({"metadata": {"name": "web"}}) else None

    service = wait_for(corrected, what="the Service's selector restored")
    assert service["metadata"]["annotations"]["team"] == "web"  # not ours: kept


def test_a_persons_own_service_is_adopted_saying_so_and_reports_its_http_node_port(
    kube: ApiKube, namespace: str
) -> None:
    """`kubectl create service nodeport web-service --tcp=8080:8080` before the WebServer:
    opsboard adopts it (it has no controller), adds its own port beside the person's, and
    reports the nodePort of its own port, not of the first."""
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web-service", "namespace": namespace, "labels": {"app": "mine"}},
        "spec": {
            "type": "NodePort",
            "selector": {"app": "mine"},
            "ports": [{"name": "8080-8080", "port": 8080, "targetPort": 8080}],
        },
    }
    kube.create(SERVICE, service)
    started = timezone.now()
    _create(kube, namespace, "web", replicas=1)
    cr = _wait_settled(kube, namespace, "web", 1)
    adopted = kube.get(SERVICE, namespace, "web-service")
    assert adopted is not None
    ports = {p["name"]: p["nodePort"] for p in adopted["spec"]["ports"]}
    assert set(ports) == {"8080-8080", "http"}
    assert cr["status"]["nodePort"] == ports["http"]
    actions = actions_since(Key("webserver", namespace, "web"), started)
    assert "Adopted Service web-service: it had no controller (created outside opsboard)" in actions


def test_a_deleted_deployment_is_restored(kube: ApiKube, namespace: str) -> None:
    _create(kube, namespace, "web", replicas=2)
    _wait_settled(kube, namespace, "web", 2)
    old = kube.get(DEPLOYMENT, namespace, "web")
    assert old is not None
    kube.delete(DEPLOYMENT, namespace, "web")
    wait_for(
        lambda: (
            (d := kube.get(DEPLOYMENT, namespace, "web"))
            and d["metadata"]["uid"] != old["metadata"]["uid"]
        ),
        what="a new Deployment web",
    )
    _wait_settled(kube, namespace, "web", 2)


def test_an_image_change_rolls_the_pods_and_status_shows_the_rollout(
    kube: ApiKube, namespace: str
) -> None:
    _create(kube, namespace, "web", replicas=2)
    _wait_settled(kube, namespace, "web", 2)
    # First an image no node can pull: the rollout stops after its first new pod (maxSurge 1,
    # maxUnavailable 0), so the status is seen mid-rollout however fast the pods of a good
    # image start (on kubesim a whole rollout can finish within one reconcile).
    kube.patch(WEBSERVER, namespace, "web", {"spec": {"image": "nginx:does-not-exist"}})

    def stalled() -> dict[str, Any] | None:
        cr = kube.get(WEBSERVER, namespace, "web") or {}
        status = cr.get("status") or {}
        if status.get("observedGeneration") != deep_get(cr, "metadata.generation"):
            return None
        degraded = condition_of(cr, "Degraded")
        return cr if degraded.get("reason") == "ImagePullFailed" else None

    cr = wait_for(stalled, what="the rollout to stall on the image pull")
    assert condition_of(cr, "Progressing")["reason"] == "RollingOut"
    assert condition_of(cr, "Progressing")["message"] == "1/2 pods run nginx:does-not-exist"
    assert condition_of(cr, "Available")["status"] == "True"  # the old pods still serve
    assert cr["status"]["readyReplicas"] == 2

    kube.patch(WEBSERVER, namespace, "web", {"spec": {"image": "nginx:1.25.3"}})

    def rolled() -> dict[str, Any] | None:
        cr = _settled(kube, namespace, "web", 2)
        progressing = condition_of(cr, "Progressing")
        return cr if cr is not None and progressing.get("reason") == "RolloutComplete" else None

    cr = wait_for(rolled, what="the rollout to complete")
    assert condition_of(cr, "Progressing")["message"] == "2 pods run nginx:1.25.3"
    assert condition_of(cr, "Degraded")["status"] == "False"
    pods = list_objects(kube, POD, namespace, labels_for({"metadata": {"name": "web"}}))
    live = [p for p in pods if not deep_get(p, "metadata.deletionTimestamp")]
    assert {p["spec"]["containers"][0]["image"] for p in live} == {"nginx:1.25.3"}
    assert sorted(p["metadata"]["name"] for p in live) == cr["status"]["nodes"]


def test_deleting_the_cr_garbage_collects_its_children(kube: ApiKube, namespace: str) -> None:
    _create(kube, namespace, "web", replicas=1)
    _wait_settled(kube, namespace, "web", 1)
    kube.delete(WEBSERVER, namespace, "web")
    wait_for(
        lambda: (
            kube.get(DEPLOYMENT, namespace, "web") is None
            and kube.get(SERVICE, namespace, "web-service") is None
        ),
        what="the Deployment and Service to be garbage-collected",
    )
