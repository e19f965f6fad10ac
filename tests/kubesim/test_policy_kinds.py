"""networking.k8s.io/v1 NetworkPolicy and policy/v1 PodDisruptionBudget, as a cluster serves them."""

from __future__ import annotations

import json

import pytest
from kubernetes import client

from tests.kubesim.conftest import Kubectl
from tests.kubesim.support import wait_for

Api = client.ApiClient


def _policy(name: str, **spec: object) -> dict:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name},
        "spec": {"podSelector": {"matchLabels": {"app": "web"}}, **spec},
    }


def _budget(name: str, **spec: object) -> dict:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
    }


def _web(replicas: int) -> dict:
    labels = {"app": "web"}
    return {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]},
            },
        },
    }


def test_a_network_policy_is_stored_with_the_server_defaults(
    kube_api_client: Api, namespace: str
) -> None:
    net = client.NetworkingV1Api(kube_api_client)
    ingress = [{"ports": [{"port": 8000}]}]

    created = net.create_namespaced_network_policy(namespace, _policy("web", ingress=ingress))
    both = net.create_namespaced_network_policy(namespace, _policy("out", egress=[{}]))

    assert created.spec.policy_types == ["Ingress"]
    assert created.spec.ingress[0].ports[0].protocol == "TCP"
    assert both.spec.policy_types == ["Ingress", "Egress"]
    listed = net.list_namespaced_network_policy(namespace).items
    assert sorted(p.metadata.name for p in listed) == ["out", "web"]


def test_kubectl_lists_network_policies_with_their_pod_selector(
    kube_api_client: Api, namespace: str, kubectl: Kubectl
) -> None:
    net = client.NetworkingV1Api(kube_api_client)
    net.create_namespaced_network_policy(namespace, _policy("web"))
    everything = _policy("deny")
    everything["spec"]["podSelector"] = {}
    net.create_namespaced_network_policy(namespace, everything)

    lines = kubectl("get", "netpol", namespace=namespace).stdout.splitlines()

    assert lines[0].split() == ["NAME", "POD-SELECTOR", "AGE"]
    rows = {line.split()[0]: line.split()[1] for line in lines[1:]}
    assert rows == {"deny": "<none>", "web": "app=web"}


def test_discovery_names_the_policy_kinds(kubectl: Kubectl) -> None:
    out = kubectl("api-resources", "--api-group=policy", "-o", "name").stdout.split()
    assert "poddisruptionbudgets.policy" in out
    netpol = kubectl("api-resources", "--api-group=networking.k8s.io").stdout
    assert any(line.split()[:2] == ["networkpolicies", "netpol"] for line in netpol.splitlines())


def test_a_budget_counts_the_healthy_pods_it_selects(kube_api_client: Api, namespace: str) -> None:
    apps, policy = client.AppsV1Api(kube_api_client), client.PolicyV1Api(kube_api_client)
    apps.create_namespaced_deployment(namespace, _web(3))
    created = policy.create_namespaced_pod_disruption_budget(
        namespace, _budget("web", min_available=2)
    )
    assert created.status.disruptions_allowed == 0

    def settled() -> client.V1PodDisruptionBudgetStatus | None:
        status = policy.read_namespaced_pod_disruption_budget("web", namespace).status
        return status if status.current_healthy == 3 else None

    status = wait_for(settled, timeout=30, what="three healthy pods")
    assert (status.expected_pods, status.desired_healthy, status.disruptions_allowed) == (3, 2, 1)
    assert status.observed_generation == created.metadata.generation
    [allowed] = status.conditions
    assert (allowed.type, allowed.status, allowed.reason) == (
        "DisruptionAllowed",
        "True",
        "SufficientPods",
    )


def test_a_percent_budget_counts_the_replicas_of_the_pods_controller(
    kube_api_client: Api, namespace: str, kubectl: Kubectl
) -> None:
    apps, policy = client.AppsV1Api(kube_api_client), client.PolicyV1Api(kube_api_client)
    apps.create_namespaced_deployment(namespace, _web(2))
    policy.create_namespaced_pod_disruption_budget(namespace, _budget("web", max_unavailable="50%"))

    def settled() -> client.V1PodDisruptionBudgetStatus | None:
        status = policy.read_namespaced_pod_disruption_budget("web", namespace).status
        return status if status.current_healthy == 2 else None

    status = wait_for(settled, timeout=30, what="two healthy pods")
    assert (status.expected_pods, status.desired_healthy, status.disruptions_allowed) == (2, 1, 1)
    lines = kubectl("get", "pdb", "web", namespace=namespace).stdout.splitlines()
    assert lines[0].split() == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED",
                                "DISRUPTIONS", "AGE"]  # fmt: skip
    assert lines[1].split()[:4] == ["web", "N/A", "50%", "1"]


def test_a_budget_that_selects_nothing_allows_no_disruption(
    kube_api_client: Api, namespace: str
) -> None:
    policy = client.PolicyV1Api(kube_api_client)
    policy.create_namespaced_pod_disruption_budget(namespace, _budget("idle", min_available=1))

    def observed() -> client.V1PodDisruptionBudgetStatus | None:
        status = policy.read_namespaced_pod_disruption_budget("idle", namespace).status
        return status if status.conditions else None

    status = wait_for(observed, timeout=30, what="the budget observed")
    assert (status.expected_pods, status.disruptions_allowed) == (0, 0)
    assert status.conditions[0].reason == "InsufficientPods"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"minAvailable": -1}, "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"),
        ({"maxUnavailable": "120%"}, 'spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"120%"}: must not be greater than 100%'),
        ({"maxUnavailable": "abc"}, 'spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"abc"}: a valid percent string must be'),
        ({"minAvailable": 1, "maxUnavailable": 1}, "minAvailable and maxUnavailable cannot be both set"),
    ],
)  # fmt: skip
def test_an_impossible_budget_is_invalid(
    kube_api_client: Api, namespace: str, spec: dict, message: str
) -> None:
    policy = client.PolicyV1Api(kube_api_client)
    body = _budget("bad")
    body["spec"].update(spec)

    with pytest.raises(client.ApiException) as exc:
        policy.create_namespaced_pod_disruption_budget(namespace, body)

    assert exc.value.status == 422
    assert message in json.loads(exc.value.body)["message"]


def _evict(core: client.CoreV1Api, namespace: str, name: str) -> None:
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}
    core.create_namespaced_pod_eviction(name, namespace, body)


def _settled_pods(
    core: client.CoreV1Api, policy: client.PolicyV1Api, namespace: str, count: int
) -> list[str]:
    def settled() -> bool:
        status = policy.read_namespaced_pod_disruption_budget("web", namespace).status
        return status.current_healthy == count and status.expected_pods == count

    wait_for(settled, timeout=30, what=f"{count} healthy pods counted")
    return sorted(p.metadata.name for p in core.list_namespaced_pod(namespace).items)


def test_an_eviction_the_budget_cannot_afford_is_too_many_requests(
    kube_api_client: Api, namespace: str
) -> None:
    apps, core = client.AppsV1Api(kube_api_client), client.CoreV1Api(kube_api_client)
    policy = client.PolicyV1Api(kube_api_client)
    apps.create_namespaced_deployment(namespace, _web(2))
    policy.create_namespaced_pod_disruption_budget(namespace, _budget("web", min_available=2))
    victim = _settled_pods(core, policy, namespace, 2)[0]

    with pytest.raises(client.ApiException) as exc:
        _evict(core, namespace, victim)

    assert exc.value.status == 429
    status = json.loads(exc.value.body)
    assert status["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert status["details"]["causes"] == [
        {
            "reason": "DisruptionBudget",
            "message": "The disruption budget web needs 2 healthy pods and has 2 currently",
        }
    ]
    assert core.read_namespaced_pod(victim, namespace).metadata.deletion_timestamp is None


@pytest.mark.kubesim_only  # pauses the controllers so the spent budget stays as the eviction left it
def test_an_eviction_spends_the_budget_it_was_allowed(
    kube_api_client: Api, namespace: str, kubesim_server: object
) -> None:
    apps, core = client.AppsV1Api(kube_api_client), client.CoreV1Api(kube_api_client)
    policy = client.PolicyV1Api(kube_api_client)
    apps.create_namespaced_deployment(namespace, _web(3))
    policy.create_namespaced_pod_disruption_budget(namespace, _budget("web", max_unavailable=1))
    first, second, _ = _settled_pods(core, policy, namespace, 3)
    cluster = kubesim_server.cluster  # type: ignore[attr-defined]
    cluster.pause("controllers")
    try:
        _evict(core, namespace, first)
        spent = policy.read_namespaced_pod_disruption_budget("web", namespace).status
        with pytest.raises(client.ApiException) as exc:
            _evict(core, namespace, second)
    finally:
        cluster.resume("controllers")

    assert spent.disruptions_allowed == 0
    assert list(spent.disrupted_pods) == [first]
    assert exc.value.status == 429
    assert _terminating_or_gone(core, namespace, first)


def _terminating_or_gone(core: client.CoreV1Api, namespace: str, name: str) -> bool:
    try:
        return core.read_namespaced_pod(name, namespace).metadata.deletion_timestamp is not None
    except client.ApiException as exc:
        return exc.status == 404
