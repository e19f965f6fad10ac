"""The WebServer CR's status, computed from its pods and its Service (pure)."""

from __future__ import annotations

from controllers.base import Body
from controllers.fields import node_port
from controllers.graces import DEFAULT_GRACES, Graces
from controllers.problems import Problem
from controllers.webserver.desired import (
    PORT_NAME,
    RESOURCES_PATH,
    labels_for,
    service_name,
    spec_image,
    spec_replicas,
)
from controllers.workload import workload_status


def compute_status(
    cr: Body,
    *,
    pods: list[Body],
    service: Body | None,
    now: str,
    problem: Problem | None = None,
    deployment: Body | None = None,
    graces: Graces = DEFAULT_GRACES,
) -> Body:
    """As for Memcached, plus where to reach it: the Service's name and its nodePort."""
    status = workload_status(
        cr,
        pods=pods,
        size=spec_replicas(cr),
        image=spec_image(cr),
        labels=labels_for(cr),
        now=now,
        problem=problem,
        workload=deployment,
        size_field="spec.replicas",
        resources_field=RESOURCES_PATH,
        graces=graces,
    )
    status["serviceName"] = service_name(cr)
    if (port := node_port(service, PORT_NAME)) is not None:
        status["nodePort"] = port
    return status
