"""The WebServer operator's desired state, built from the CR alone (pure)."""

from __future__ import annotations

from controllers.base import DEPLOYMENT, SERVICE, Body, Kind, Manifest
from controllers.fields import deep_get
from controllers.ownership import child_metadata, owned_labels
from controllers.resources import container_resources, exact_resources

WEBSERVER = Kind("my.domain", "v1", "WebServer", "webservers")

DEFAULT_REPLICAS = 1
DEFAULT_IMAGE = "nginx:1.23.1"
DEFAULT_PORT = 80
PORT_NAME = "http"  # the Service's port, found by it in an adopted Service's other ports
# A key added to the Service's selector would select other pods (or none): it is ours whole.
SERVICE_EXACT = frozenset({"spec.selector"})
RESOURCES_PATH = "spec.resources"
NODE_PORT_PATH = "spec.nodePort"  # a fixed NodePort; unset, the cluster allocates one
# The nginx container's resources are the CR's alone.
DEPLOYMENT_EXACT = exact_resources()


def spec_replicas(cr: Body) -> int:
    return int(deep_get(cr, "spec.replicas", DEFAULT_REPLICAS))


def spec_image(cr: Body) -> str:
    return str(deep_get(cr, "spec.image") or DEFAULT_IMAGE)


def spec_port(cr: Body) -> int:
    return int(deep_get(cr, "spec.port", DEFAULT_PORT))


def service_name(cr: Body) -> str:
    return f"{cr['metadata']['name']}-service"


def labels_for(cr: Body) -> dict[str, str]:
    """Select this CR's pods only: the instance label keeps two CRs of a namespace apart."""
    return owned_labels("webserver", cr["metadata"]["name"])


def desired_deployment(cr: Body) -> Manifest:
    labels = labels_for(cr)
    return {
        "apiVersion": DEPLOYMENT.api_version,
        "kind": DEPLOYMENT.kind,
        "metadata": child_metadata(cr, cr["metadata"]["name"], labels),
        "spec": {
            "replicas": spec_replicas(cr),
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [
                        {
                            "name": "nginx",
                            "image": spec_image(cr),
                            "imagePullPolicy": "IfNotPresent",
                            "resources": container_resources(cr, RESOURCES_PATH),
                            "ports": [
                                {"name": "http", "containerPort": spec_port(cr), "protocol": "TCP"}
                            ],
                            # The stock nginx image starts as root and drops to its worker user,
                            # so it cannot run as non-root: keep only the capabilities it uses.
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "capabilities": {
                                    "drop": ["ALL"],
                                    "add": ["CHOWN", "NET_BIND_SERVICE", "SETGID", "SETUID"],
                                },
                            },
                        }
                    ],
                },
            },
        },
    }


def spec_node_port(cr: Body) -> int | None:
    node_port = deep_get(cr, NODE_PORT_PATH)
    return None if node_port is None else int(node_port)


def previous_node_port(cr: Body) -> int | None:
    """The nodePort the CR's last Service had, as its status tells: a Service created anew
    (someone deleted it) asks for it, so http://node:PORT keeps working."""
    node_port = deep_get(cr, "status.nodePort")
    return None if node_port is None else int(node_port)


def desired_service(cr: Body, *, node_port: int | None = None) -> Manifest:
    """A NodePort Service. Its nodePort is the spec's if it names one, else `node_port` (the
    previous Service's, for one created anew), else the cluster allocates one."""
    port: Body = {
        "name": PORT_NAME,
        "port": spec_port(cr),
        "targetPort": spec_port(cr),
        "protocol": "TCP",
    }
    wanted = spec_node_port(cr)
    if wanted is None:
        wanted = node_port
    if wanted is not None:
        port["nodePort"] = wanted
    return {
        "apiVersion": SERVICE.api_version,
        "kind": SERVICE.kind,
        "metadata": child_metadata(cr, service_name(cr), labels_for(cr)),
        "spec": {"type": "NodePort", "selector": labels_for(cr), "ports": [port]},
    }
