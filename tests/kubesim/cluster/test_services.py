"""ClusterIP and NodePort allocation, Endpoints and EndpointSlices."""

from __future__ import annotations

import ipaddress
import json

import pytest
from kubernetes import client

from tests.kubesim.cluster.helpers import deployment, is_ready, pods_of, wait_for

SERVICE_RANGE = ipaddress.ip_network("10.96.0.0/12")


def service(
    name: str,
    *,
    type_: str = "ClusterIP",
    node_port: int | None = None,
    target: object = "memcached",
) -> dict:
    port = {"name": "memcached", "port": 11211, "targetPort": target}
    if node_port:
        port["nodePort"] = node_port
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {
            "type": type_,
            "selector": {"app": "memcached", "memcached_cr": "memcached"},
            "ports": [port],
        },
    }


@pytest.fixture
def discovery(kube_api_client: client.ApiClient) -> client.DiscoveryV1Api:
    return client.DiscoveryV1Api(kube_api_client)


@pytest.mark.kubesim_only
def test_cluster_ips_come_from_the_service_range_without_collisions(core, namespace):
    ips = [
        core.create_namespaced_service(namespace, service(f"s{i}")).spec.cluster_ip
        for i in range(5)
    ]

    assert len(set(ips)) == 5
    assert all(ipaddress.ip_address(ip) in SERVICE_RANGE for ip in ips)


def test_node_ports_are_allocated_in_range_and_unique(core, namespace):
    ports = [
        core.create_namespaced_service(namespace, service(f"np{i}", type_="NodePort"))
        .spec.ports[0]
        .node_port
        for i in range(3)
    ]

    assert len(set(ports)) == 3
    assert all(30000 <= p <= 32767 for p in ports)


def test_a_node_port_in_use_is_rejected_as_invalid(core, namespace):
    taken = (
        core.create_namespaced_service(namespace, service("first", type_="NodePort"))
        .spec.ports[0]
        .node_port
    )

    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_service(
            namespace, service("second", type_="NodePort", node_port=taken)
        )

    assert err.value.status == 422
    assert (
        f"spec.ports[0].nodePort: Invalid value: {taken}: provided port is already allocated"
        in err.value.body
    )
    with pytest.raises(client.ApiException):
        core.read_namespaced_service("second", namespace)


@pytest.mark.parametrize("outside", [29999, 40000])
def test_a_node_port_outside_the_range_is_rejected_as_invalid(core, namespace, outside):
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_service(
            namespace, service("outside", type_="NodePort", node_port=outside)
        )

    assert err.value.status == 422
    assert json.loads(err.value.body)["details"]["causes"] == [
        {
            "field": "spec.ports[0].nodePort",
            "message": f"Invalid value: {outside}: provided port is not in the valid range. "
            "The range of valid ports is 30000-32767",
            "reason": "FieldValueInvalid",
        }
    ]


def test_creating_a_service_again_with_its_own_node_port_is_refused_as_allocated(core, namespace):
    """kube-apiserver allocates before it finds the name taken: 422, not 409 AlreadyExists."""
    first = core.create_namespaced_service(namespace, service("again", type_="NodePort"))
    own = first.spec.ports[0].node_port

    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_service(namespace, service("again", type_="NodePort", node_port=own))
    assert err.value.status == 422
    assert f"Invalid value: {own}: provided port is already allocated" in err.value.body
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_service(namespace, service("again", type_="NodePort"))
    assert err.value.status == 409


def test_a_taken_cluster_ip_is_the_only_error_told_beside_a_taken_node_port(core, namespace):
    first = core.create_namespaced_service(namespace, service("first", type_="NodePort"))
    body = service("second", type_="NodePort", node_port=first.spec.ports[0].node_port)
    body["spec"]["clusterIP"] = ip = first.spec.cluster_ip

    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_service(namespace, body)

    assert err.value.status == 422
    assert json.loads(err.value.body)["details"]["causes"] == [
        {
            "field": "spec.clusterIPs",
            "message": f'Invalid value: []string{{"{ip}"}}: failed to allocate IP {ip}: '
            "provided IP is already allocated",
            "reason": "FieldValueInvalid",
        }
    ]


def test_a_freed_node_port_can_be_requested_again(core, namespace):
    taken = (
        core.create_namespaced_service(namespace, service("first", type_="NodePort"))
        .spec.ports[0]
        .node_port
    )
    core.delete_namespaced_service("first", namespace)

    again = core.create_namespaced_service(
        namespace, service("second", type_="NodePort", node_port=taken)
    )

    assert again.spec.ports[0].node_port == taken


def test_updating_a_service_keeps_its_node_port_and_cluster_ip(core, namespace):
    created = core.create_namespaced_service(namespace, service("keep", type_="NodePort"))

    patched = core.patch_namespaced_service(
        "keep", namespace, {"metadata": {"labels": {"touched": "yes"}}}
    )

    assert patched.spec.cluster_ip == created.spec.cluster_ip
    assert patched.spec.ports[0].node_port == created.spec.ports[0].node_port


def test_endpoints_track_the_ready_pods_the_selector_picks(apps, core, discovery, namespace):
    core.create_namespaced_service(namespace, service("memcached"))
    apps.create_namespaced_deployment(namespace, deployment("memcached", replicas=2))
    selector = "app=memcached,memcached_cr=memcached"

    def addresses() -> set[str]:
        ep = core.read_namespaced_endpoints("memcached", namespace)
        return {a.ip for s in ep.subsets or [] for a in s.addresses or []}

    def ready_ips() -> set[str]:
        return {p.status.pod_ip for p in pods_of(core, namespace, selector) if is_ready(p)}

    wait_for(
        lambda: len(ready_ips()) == 2 and addresses() == ready_ips(), what="2 endpoint addresses"
    )
    ep = core.read_namespaced_endpoints("memcached", namespace)
    assert ep.subsets[0].ports[0].port == 11211  # the named targetPort, resolved
    assert {a.target_ref.kind for a in ep.subsets[0].addresses} == {"Pod"}

    slices = discovery.list_namespaced_endpoint_slice(
        namespace, label_selector="kubernetes.io/service-name=memcached"
    )
    [eps] = slices.items
    assert eps.address_type == "IPv4"
    assert {e.addresses[0] for e in eps.endpoints if e.conditions.ready} == ready_ips()

    apps.patch_namespaced_deployment_scale("memcached", namespace, {"spec": {"replicas": 1}})
    wait_for(
        lambda: len(addresses()) == 1 and addresses() <= ready_ips(), what="1 endpoint address"
    )
