"""The Memcached operator's desired state, built from the CR alone (pure)."""

from __future__ import annotations

from controllers.base import DEPLOYMENT, Body, Kind, Manifest
from controllers.fields import deep_get
from controllers.ownership import child_metadata, owned_labels
from controllers.resources import container_resources, exact_resources

MEMCACHED = Kind("cache.example.com", "v1alpha1", "Memcached", "memcacheds")

DEFAULT_SIZE = 1
DEFAULT_IMAGE = "memcached:1.4.36-alpine"
DEFAULT_PORT = 11211
RESOURCES_PATH = "spec.resources"
# The memcached container's resources are the CR's alone.
DEPLOYMENT_EXACT = exact_resources()

# The non-root user the tutorial runs memcached as: runAsNonRoot needs a numeric uid.
RUN_AS_USER = 1001


def spec_size(cr: Body) -> int:
    return int(deep_get(cr, "spec.size", DEFAULT_SIZE))


def spec_image(cr: Body) -> str:
    return str(deep_get(cr, "spec.image") or DEFAULT_IMAGE)


def spec_port(cr: Body) -> int:
    return int(deep_get(cr, "spec.containerPort", DEFAULT_PORT))


def labels_for(cr: Body) -> dict[str, str]:
    """Select this CR's pods only: the instance label keeps two CRs of a namespace apart."""
    return owned_labels("memcached", cr["metadata"]["name"])


def desired_deployment(cr: Body) -> Manifest:
    meta = cr["metadata"]
    labels = labels_for(cr)
    return {
        "apiVersion": DEPLOYMENT.api_version,
        "kind": DEPLOYMENT.kind,
        "metadata": child_metadata(cr, meta["name"], labels),
        "spec": {
            "replicas": spec_size(cr),
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    # The "restricted" Pod Security Standard.
                    "securityContext": {
                        "runAsNonRoot": True,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [
                        {
                            "name": "memcached",
                            "image": spec_image(cr),
                            "imagePullPolicy": "IfNotPresent",
                            "command": ["memcached", "-m=64", "-o", "modern", "-v"],
                            "resources": container_resources(cr, RESOURCES_PATH),
                            "ports": [
                                {
                                    "name": "memcached",
                                    "containerPort": spec_port(cr),
                                    "protocol": "TCP",
                                }
                            ],
                            "securityContext": {
                                "runAsNonRoot": True,
                                "runAsUser": RUN_AS_USER,
                                "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"]},
                            },
                        }
                    ],
                },
            },
        },
    }
