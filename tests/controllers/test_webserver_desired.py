from __future__ import annotations

from controllers.webserver.desired import (
    desired_deployment,
    desired_service,
    previous_node_port,
)
from tests.controllers.builders import webserver


def test_desired_deployment_takes_replicas_and_image_from_the_spec() -> None:
    deployment = desired_deployment(webserver(replicas=3, image="nginx:1.25"))
    assert deployment["spec"]["replicas"] == 3
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"


def test_desired_deployment_defaults_to_one_nginx_1_23_1_on_port_80() -> None:
    deployment = desired_deployment(webserver())
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert deployment["spec"]["replicas"] == 1
    assert container["image"] == "nginx:1.23.1"
    assert container["ports"][0]["containerPort"] == 80


def test_desired_deployment_drops_privileges_nginx_does_not_need() -> None:
    deployment = desired_deployment(webserver())
    security = deployment["spec"]["template"]["spec"]["containers"][0]["securityContext"]
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"]["drop"] == ["ALL"]
    assert "SYS_ADMIN" not in security["capabilities"]["add"]
    assert deployment["spec"]["template"]["spec"]["securityContext"]["seccompProfile"] == {
        "type": "RuntimeDefault"
    }


def test_desired_service_is_a_node_port_service_named_after_the_cr() -> None:
    service = desired_service(webserver("web"))
    assert service["metadata"]["name"] == "web-service"
    assert service["spec"]["type"] == "NodePort"
    assert service["metadata"]["ownerReferences"][0]["uid"] == "uid-web"


def test_desired_service_selects_the_pods_of_the_deployment() -> None:
    cr = webserver("web")
    assert (
        desired_service(cr)["spec"]["selector"]
        == desired_deployment(cr)["spec"]["template"]["metadata"]["labels"]
    )


def test_desired_service_leaves_the_node_port_to_the_cluster_unless_the_spec_names_one() -> None:
    [port] = desired_service(webserver(port=8080))["spec"]["ports"]
    assert port == {"name": "http", "port": 8080, "targetPort": 8080, "protocol": "TCP"}
    [pinned] = desired_service(webserver(nodePort=30010))["spec"]["ports"]
    assert pinned["nodePort"] == 30010


def test_desired_service_asks_for_the_node_port_it_is_given_unless_the_spec_names_one() -> None:
    [kept] = desired_service(webserver(), node_port=31000)["spec"]["ports"]
    assert kept["nodePort"] == 31000
    [pinned] = desired_service(webserver(nodePort=30010), node_port=31000)["spec"]["ports"]
    assert pinned["nodePort"] == 30010


def test_the_previous_node_port_is_the_one_the_status_reports() -> None:
    cr = webserver()
    assert previous_node_port(cr) is None
    cr["status"] = {"serviceName": "webserver-sample-service", "nodePort": 31000}
    assert previous_node_port(cr) == 31000


def test_two_webservers_get_distinct_services_and_selectors() -> None:
    a, b = desired_service(webserver("a")), desired_service(webserver("b"))
    assert a["metadata"]["name"] != b["metadata"]["name"]
    assert a["spec"]["selector"] != b["spec"]["selector"]
