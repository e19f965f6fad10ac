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
        ({"maxUnavailable": "120%"}, "spec.maxUnavailable: Invalid value: 120%: must not be greater than 100%"),
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
