from __future__ import annotations

from controllers.conditions import find_condition
from controllers.webserver.status import compute_status
from tests.controllers.builders import pod, webserver


def test_status_names_the_service_and_its_allocated_node_port() -> None:
    service = {"spec": {"ports": [{"name": "http", "port": 80, "nodePort": 31555}]}}
    status = compute_status(webserver("web"), pods=[], service=service, now="T")
    assert status["serviceName"] == "web-service"
    assert status["nodePort"] == 31555


def test_status_reports_the_node_port_of_its_http_port_in_an_adopted_service() -> None:
    """A person's Service, adopted, keeps its own ports, which may come first."""
    service = {
        "spec": {
            "ports": [
                {"name": "8080-8080", "port": 8080, "nodePort": 32139},
                {"name": "http", "port": 80, "nodePort": 30926},
            ]
        }
    }
    status = compute_status(webserver("web"), pods=[], service=service, now="T")
    assert status["nodePort"] == 30926


def test_status_has_no_node_port_before_the_service_exists() -> None:
    status = compute_status(webserver("web"), pods=[], service=None, now="T")
    assert status["serviceName"] == "web-service"
    assert "nodePort" not in status


def test_status_counts_replicas_against_spec_replicas() -> None:
    pods = [pod(f"w-{i}", image="nginx:1.23.1") for i in range(3)]
    status = compute_status(webserver(replicas=3), pods=pods, service=None, now="T")
    assert status["nodes"] == ["w-0", "w-1", "w-2"]
    available = find_condition(status["conditions"], "Available")
    assert available is not None and available["status"] == "True"
