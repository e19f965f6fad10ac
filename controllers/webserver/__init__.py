"""The WebServer operator (my.domain/v1): a Deployment and a NodePort Service per CR."""

from __future__ import annotations

from controllers.base import DEPLOYMENT, POD, SERVICE, Controller, CrFields
from controllers.webserver.desired import NODE_PORT_PATH, RESOURCES_PATH, WEBSERVER
from controllers.webserver.reconcile import expected_children, reconcile

CONTROLLER = Controller(
    name="webserver",
    primary=WEBSERVER,
    # Pods are watched so the engine's cache can list them for status.nodes.
    owns=(DEPLOYMENT, SERVICE, POD),
    reconcile=reconcile,
    expected_children=expected_children,
    fields=CrFields(
        size="spec.replicas",
        image="spec.image",
        resources=(("nginx", RESOURCES_PATH),),
        node_port=NODE_PORT_PATH,
    ),
    owns_spec_only=(DEPLOYMENT,),  # its pods tell the status
)
