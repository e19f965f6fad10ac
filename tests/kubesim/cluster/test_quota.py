"""ResourceQuota on object counts: the ResourceQuota admission's 403, the quota's status, a
Deployment past its quota carrying ReplicaFailure from its ReplicaSet, and the counts of
other objects (Services' node ports, count/<resource>.<group>, claims' storage), as on
v1.28."""

from __future__ import annotations

import json
import re
from typing import Any

from kubernetes import client

from tests.kubesim.cluster.helpers import (
    claim,
    create_bound_claim,
    create_limit_range,
    create_quota,
    daemonset,
    deployment,
    events_for,
    grow_claim,
    pod,
    statefulset,
    wait_for,
)
from tests.kubesim.support import raw

Api = client.ApiClient
QUOTA_REFUSAL = (
    r'pods "{pod}" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, '
    r"limited: pods=1"
)


def _status_of(api: Api, path: str) -> dict[str, Any]:
    body: dict[str, Any] = raw(api, "GET", path).json()["status"]
    return body


def _failure(conditions: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    return next((c for c in conditions or [] if c["type"] == "ReplicaFailure"), None)


def test_a_pod_past_the_pods_quota_is_forbidden_naming_the_quota(
    core: client.CoreV1Api, kube_api_client: Api, namespace: str
) -> None:
    create_quota(core, namespace, {"pods": "1"})
    core.create_namespaced_pod(namespace, pod("first"))
    resp = raw(kube_api_client, "POST", f"/api/v1/namespaces/{namespace}/pods", body=pod("second"))
    assert resp.status == 403
    assert resp.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods "second" is forbidden: exceeded quota: q, requested: pods=1, '
        "used: pods=1, limited: pods=1",
        "reason": "Forbidden",
        "details": {"name": "second", "kind": "pods"},
        "code": 403,
    }

    def counted() -> Any:
        status = core.read_namespaced_resource_quota("q", namespace).status
        return status.used == {"pods": "1"} and status

    # kube-apiserver counts a pod as it admits it; kubesim's quota controller just after.
    assert wait_for(counted, what="the first pod counted").hard == {"pods": "1"}


def test_the_refusal_lists_every_exceeded_resource_by_name(
    core: client.CoreV1Api, namespace: str
) -> None:
    create_quota(core, namespace, {"pods": "0", "count/pods": "0"})
    try:
        core.create_namespaced_pod(namespace, pod("first"))
    except client.ApiException as exc:
        refusal = exc
    else:
        raise AssertionError("a pod past a quota of 0 was created")
    assert refusal.status == 403
    assert (
        'pods \\"first\\" is forbidden: exceeded quota: q, requested: count/pods=1,pods=1, '
        "used: count/pods=0,pods=0, limited: count/pods=0,pods=0" in refusal.body
    )


def test_a_deployment_past_the_quota_carries_its_replicasets_replica_failure(
    apps: client.AppsV1Api, core: client.CoreV1Api, kube_api_client: Api, namespace: str
) -> None:
    create_quota(core, namespace, {"pods": "1"})
    apps.create_namespaced_deployment(namespace, deployment("web", replicas=3))
    [rs] = wait_for(lambda: apps.list_namespaced_replica_set(namespace).items, what="the RS")
    rs_path = f"/apis/apps/v1/namespaces/{namespace}/replicasets/{rs.metadata.name}"
    deployment_path = f"/apis/apps/v1/namespaces/{namespace}/deployments/web"

    rs_failure = wait_for(lambda: _failure(_status_of(kube_api_client, rs_path).get("conditions")),
                          what="ReplicaFailure on the ReplicaSet")  # fmt: skip
    assert set(rs_failure) == {"type", "status", "lastTransitionTime", "reason", "message"}
    assert (rs_failure["status"], rs_failure["reason"]) == ("True", "FailedCreate")
    refused = QUOTA_REFUSAL.format(pod=re.escape(rs.metadata.name) + "-[a-z0-9]{5}")
    assert re.fullmatch(refused, rs_failure["message"]), rs_failure["message"]

    failure = wait_for(lambda: _failure(_status_of(kube_api_client, deployment_path).get("conditions")),
                       what="ReplicaFailure on the Deployment")  # fmt: skip
    # Copied from the ReplicaSet's; the message names the pod of the last refusal, which a
    # retry may have changed in between.
    same = {**rs_failure, "lastUpdateTime": rs_failure["lastTransitionTime"]}
    assert {**failure, "message": ""} == {**same, "message": ""}
    assert re.fullmatch(refused, failure["message"]), failure["message"]

    warnings = [e for e in events_for(core, namespace, rs.metadata.name) if e.reason == "FailedCreate"]  # fmt: skip
    assert warnings and {e.type for e in warnings} == {"Warning"}
    assert all(re.fullmatch(r"(\(combined from similar events\): )?Error creating: " + refused,
                            e.message) for e in warnings), [e.message for e in warnings]  # fmt: skip

    # A sync that creates nothing clears the failure, on both, whatever the backoff.
    apps.patch_namespaced_deployment_scale("web", namespace, {"spec": {"replicas": 1}})
    wait_for(lambda: not _failure(_status_of(kube_api_client, rs_path).get("conditions")),
             what="ReplicaFailure gone from the ReplicaSet")  # fmt: skip
    wait_for(lambda: not _failure(_status_of(kube_api_client, deployment_path).get("conditions")),
             what="ReplicaFailure gone from the Deployment")  # fmt: skip


def _warnings(core: client.CoreV1Api, namespace: str, name: str) -> list[client.CoreV1Event]:
    return [e for e in events_for(core, namespace, name) if e.reason == "FailedCreate"]


def test_a_statefulset_past_the_quota_tells_its_refused_pod_in_a_warning(
    apps: client.AppsV1Api, core: client.CoreV1Api, namespace: str
) -> None:
    """A StatefulSet has no ReplicaFailure condition: only its Events say why a pod is
    missing, naming the ordinal pod the API server refused."""
    create_quota(core, namespace, {"pods": "1"})
    apps.create_namespaced_stateful_set(namespace, statefulset("db", replicas=2))
    [warning, *_] = wait_for(lambda: _warnings(core, namespace, "db"), what="FailedCreate on db")
    assert (warning.type, warning.involved_object.kind) == ("Warning", "StatefulSet")
    assert warning.message == (
        "create Pod db-1 in StatefulSet db failed error: " + QUOTA_REFUSAL.format(pod="db-1")
    )
    assert warning.source.component == "statefulset-controller"
    assert [p.metadata.name for p in core.list_namespaced_pod(namespace).items] == ["db-0"]


def test_a_daemonset_past_the_quota_tells_its_refused_pods_in_warnings(
    apps: client.AppsV1Api, core: client.CoreV1Api, namespace: str
) -> None:
    create_quota(core, namespace, {"pods": "1"})  # one node's pod of several
    apps.create_namespaced_daemon_set(namespace, daemonset("agent"))
    warnings = wait_for(lambda: _warnings(core, namespace, "agent"), what="FailedCreate on agent")
    assert {(e.type, e.involved_object.kind) for e in warnings} == {("Warning", "DaemonSet")}
    refused = QUOTA_REFUSAL.format(pod="agent-[a-z0-9]{5}")
    assert all(re.fullmatch(r"(\(combined from similar events\): )?Error creating: " + refused,
                            e.message) for e in warnings), [e.message for e in warnings]  # fmt: skip
    assert {e.source.component for e in warnings} == {"daemonset-controller"}

    def counted() -> Any:
        status = apps.read_namespaced_daemon_set("agent", namespace).status
        return status.desired_number_scheduled and status

    status = wait_for(counted, what="the DaemonSet's nodes counted")
    assert status.current_number_scheduled == 1 < status.desired_number_scheduled


def _wait_used(core: client.CoreV1Api, namespace: str, used: dict[str, str], what: str) -> None:
    """Until quota q's status says `used`: its controller counts just after admission."""
    wait_for(
        lambda: core.read_namespaced_resource_quota("q", namespace).status.used == used, what=what
    )


def _refusal(call: Any) -> str:
    try:
        call()
    except client.ApiException as exc:
        assert exc.status == 403, exc.body
        message: str = json.loads(exc.body)["message"]
        return message
    raise AssertionError("created past a quota")


def _service(name: str, type_: str = "ClusterIP") -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {"type": type_, "selector": {"app": name}, "ports": [{"port": 80}]},
    }


def test_node_ports_are_counted_at_a_services_creation_and_at_its_change_of_type(
    core: client.CoreV1Api, namespace: str
) -> None:
    """Many clusters give teams no NodePorts this way: a WebServer's Service is refused."""
    create_quota(core, namespace, {"services.nodeports": "0", "services": "5"})
    refused = _refusal(
        lambda: core.create_namespaced_service(namespace, _service("web", "NodePort"))
    )
    assert refused == (
        'services "web" is forbidden: exceeded quota: q, requested: services.nodeports=1, '
        "used: services.nodeports=0, limited: services.nodeports=0"
    )
    core.create_namespaced_service(namespace, _service("inside"))  # a ClusterIP holds none
    refused = _refusal(
        lambda: core.patch_namespaced_service("inside", namespace, {"spec": {"type": "NodePort"}})
    )
    assert "requested: services.nodeports=1" in refused
    assert core.read_namespaced_service("inside", namespace).spec.type == "ClusterIP"

    _wait_used(
        core,
        namespace,
        {"services": "1", "services.nodeports": "0"},
        what="one Service, no node port, in the quota's status",
    )


def test_any_resource_is_counted_as_count_resource_group(
    apps: client.AppsV1Api, core: client.CoreV1Api, namespace: str
) -> None:
    # The namespace's kube-root-ca.crt, published first: a quota counts it from the start.
    wait_for(lambda: core.list_namespaced_config_map(namespace).items, what="kube-root-ca.crt")
    create_quota(core, namespace, {"count/deployments.apps": "1", "configmaps": "1"})
    # The quota controller counts from its informers' caches: under load, a ConfigMap made
    # just before can be missing from its first count (0), which would let one more in.
    _wait_used(
        core,
        namespace,
        {"count/deployments.apps": "0", "configmaps": "1"},
        what="kube-root-ca.crt in the quota's first count",
    )
    apps.create_namespaced_deployment(namespace, deployment("a", replicas=0))
    refused = _refusal(
        lambda: apps.create_namespaced_deployment(namespace, deployment("b", replicas=0))
    )
    assert refused == (
        'deployments.apps "b" is forbidden: exceeded quota: q, requested: '
        "count/deployments.apps=1, used: count/deployments.apps=1, limited: "
        "count/deployments.apps=1"
    )
    config = {"metadata": {"name": "c"}, "data": {}}
    # The namespace's own kube-root-ca.crt counts: no ConfigMap fits under a quota of 1.
    refused = _refusal(lambda: core.create_namespaced_config_map(namespace, config))
    assert refused == (
        'configmaps "c" is forbidden: exceeded quota: q, requested: configmaps=1, '
        "used: configmaps=1, limited: configmaps=1"
    )

    _wait_used(
        core,
        namespace,
        {"count/deployments.apps": "1", "configmaps": "1"},
        what="the Deployment and the ConfigMap in the quota's status",
    )


def _sized(name: str, cpu: str, memory: str) -> dict[str, Any]:
    return pod(name, containers=[{
        "name": "main", "image": "registry.k8s.io/pause:3.9",
        "resources": {"requests": {"cpu": cpu}, "limits": {"memory": memory}},
    }])  # fmt: skip


def test_a_compute_quota_wants_every_container_to_state_it_and_sums_what_they_state(
    core: client.CoreV1Api, namespace: str
) -> None:
    """The usual quota of a shared cluster: pods that state no requests (as the operators'
    do) are refused outright, naming what each container must state."""
    create_quota(core, namespace, {"requests.cpu": "1", "limits.memory": "1Gi"})
    refused = _refusal(lambda: core.create_namespaced_pod(namespace, pod("bare")))
    assert refused == (
        'pods "bare" is forbidden: failed quota: q: must specify limits.memory for: main; '
        "requests.cpu for: main"
    )
    for name in ("a", "b"):
        core.create_namespaced_pod(namespace, _sized(name, "500m", "256Mi"))
    refused = _refusal(lambda: core.create_namespaced_pod(namespace, _sized("c", "500m", "256Mi")))
    assert refused == (
        'pods "c" is forbidden: exceeded quota: q, requested: requests.cpu=500m, '
        "used: requests.cpu=1, limited: requests.cpu=1"
    )

    _wait_used(
        core,
        namespace,
        {"requests.cpu": "1", "limits.memory": "512Mi"},
        what="two pods' requests and limits in the quota's status",
    )


def test_a_limitranges_defaults_let_pods_that_state_nothing_past_a_compute_quota(
    core: client.CoreV1Api, namespace: str
) -> None:
    """The fix the diagnosis gives for the refusal above: defaults, set and said by the
    LimitRanger admission before the quota counts them."""
    create_quota(core, namespace, {"requests.cpu": "1", "limits.memory": "1Gi"})
    create_limit_range(
        core, namespace, "defaults", default={"memory": "128Mi"}, defaultRequest={"cpu": "250m"}
    )
    created = core.create_namespaced_pod(namespace, pod("bare"))
    resources = created.spec.containers[0].resources
    assert resources.requests == {"cpu": "250m", "memory": "128Mi"}
    assert resources.limits == {"memory": "128Mi"}
    assert created.metadata.annotations["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container main; "
        "memory limit for container main"
    )
    assert created.status.qos_class == "Burstable"

    _wait_used(
        core,
        namespace,
        {"requests.cpu": "250m", "limits.memory": "128Mi"},
        what="the defaults counted in the quota's status",
    )


def test_claims_storage_is_counted_at_their_creation_and_as_they_grow(
    core: client.CoreV1Api, namespace: str
) -> None:
    create_quota(core, namespace, {"requests.storage": "3Gi"})
    create_bound_claim(core, namespace, "a", "2Gi")
    refused = _refusal(
        lambda: core.create_namespaced_persistent_volume_claim(namespace, claim("b", "2Gi"))
    )
    assert refused == (
        'persistentvolumeclaims "b" is forbidden: exceeded quota: q, requested: '
        "requests.storage=2Gi, used: requests.storage=2Gi, limited: requests.storage=3Gi"
    )
    _wait_used(core, namespace, {"requests.storage": "2Gi"}, what="claim a in the quota's status")
    # A claim grown in place asks for what it grows by.
    refused = _refusal(lambda: grow_claim(core, namespace, "a", "4Gi"))
    assert refused == (
        'persistentvolumeclaims "a" is forbidden: exceeded quota: q, requested: '
        "requests.storage=2Gi, used: requests.storage=2Gi, limited: requests.storage=3Gi"
    )
    grow_claim(core, namespace, "a", "3Gi")
    _wait_used(core, namespace, {"requests.storage": "3Gi"}, what="claim a grown, counted")


def test_a_storage_class_quota_counts_only_that_class_claims(
    core: client.CoreV1Api, namespace: str
) -> None:
    by_class = "standard.storageclass.storage.k8s.io/"
    create_quota(
        core,
        namespace,
        {by_class + "requests.storage": "1Gi", by_class + "persistentvolumeclaims": "1"},
    )
    create = core.create_namespaced_persistent_volume_claim
    create(namespace, claim("a", "1Gi"))  # of the default class, standard
    refused = _refusal(lambda: create(namespace, claim("b", "1Gi")))
    assert refused == (
        f'persistentvolumeclaims "b" is forbidden: exceeded quota: q, requested: '
        f"{by_class}persistentvolumeclaims=1,{by_class}requests.storage=1Gi, "
        f"used: {by_class}persistentvolumeclaims=1,{by_class}requests.storage=1Gi, "
        f"limited: {by_class}persistentvolumeclaims=1,{by_class}requests.storage=1Gi"
    )
    create(namespace, claim("other", "5Gi", storage_class="other"))  # another class: free
    _wait_used(
        core,
        namespace,
        {by_class + "requests.storage": "1Gi", by_class + "persistentvolumeclaims": "1"},
        what="claim a, and not the other class's, in the quota's status",
    )
