"""The BookStore operator's desired state, built from the CR alone (pure).

One BookStore is a book web app (a Deployment behind a Service) and its MongoDB (a
StatefulSet behind a headless Service, one claim per replica from volumeClaimTemplates).
The app finds the database through MONGODB_HOST, the name of the DB's Service.
"""

from __future__ import annotations

from controllers.base import DEPLOYMENT, SERVICE, STATEFULSET, Body, Kind, Manifest
from controllers.fields import deep_get
from controllers.ownership import child_metadata, owned_labels
from controllers.resources import container_resources, exact_resources

BOOKSTORE = Kind("blog.velotio.com", "v1alpha1", "BookStore", "bookstores")

APP = "bookstore"
DEFAULT_APP_REPLICAS = 1
DEFAULT_APP_IMAGE = "akash125/pyapp:latest"
DEFAULT_APP_PORT = 80  # the Service's port
DEFAULT_APP_TARGET_PORT = 3000  # the container's port
APP_PORT_NAME = "http"  # the Service's port, found by it in an adopted Service's other ports
DEFAULT_SERVICE_TYPE = "NodePort"
DEFAULT_DB_REPLICAS = 1
DEFAULT_DB_IMAGE = "mongo:7.0"
DEFAULT_DB_PORT = 27017
DEFAULT_DB_SIZE = "1Gi"
CLAIM_TEMPLATE = "data"  # claims are data-<name>-db-<ordinal>
DB_MOUNT_PATH = "/data/db"
# A key added to a Service's selector would select other pods (or none): it is ours whole.
SERVICE_EXACT = frozenset({"spec.selector"})
APP_RESOURCES_PATH = "spec.bookApp.resources"
DB_RESOURCES_PATH = "spec.bookDB.resources"
DB_SIZE_PATH = "spec.bookDB.dbSize"  # the size of each DB claim
DB_REPLICAS_PATH = "spec.bookDB.replicas"  # how many DB pods, and claims
DB_IMAGE_PATH = "spec.bookDB.image"
# The app's and mongodb's containers' resources are the CR's alone.
WORKLOAD_EXACT = exact_resources()


# --- the spec, with the CRD's defaults (a CRD without defaulting still reconciles) ----------


def app_replicas(cr: Body) -> int:
    return int(deep_get(cr, "spec.bookApp.replicas", DEFAULT_APP_REPLICAS))


def app_image(cr: Body) -> str:
    return str(deep_get(cr, "spec.bookApp.image") or DEFAULT_APP_IMAGE)


def app_port(cr: Body) -> int:
    return int(deep_get(cr, "spec.bookApp.port", DEFAULT_APP_PORT))


def app_target_port(cr: Body) -> int:
    return int(deep_get(cr, "spec.bookApp.targetPort", DEFAULT_APP_TARGET_PORT))


def service_type(cr: Body) -> str:
    return str(deep_get(cr, "spec.bookApp.serviceType") or DEFAULT_SERVICE_TYPE)


def db_replicas(cr: Body) -> int:
    return int(deep_get(cr, DB_REPLICAS_PATH, DEFAULT_DB_REPLICAS))


def db_image(cr: Body) -> str:
    return str(deep_get(cr, DB_IMAGE_PATH) or DEFAULT_DB_IMAGE)


def db_port(cr: Body) -> int:
    return int(deep_get(cr, "spec.bookDB.port", DEFAULT_DB_PORT))


def db_size(cr: Body) -> str:
    return str(deep_get(cr, "spec.bookDB.dbSize") or DEFAULT_DB_SIZE)


# --- names and labels ------------------------------------------------------------------------


def app_name(cr: Body) -> str:
    """The app's Deployment and Service."""
    return f"{cr['metadata']['name']}-app"


def db_name(cr: Body) -> str:
    """The DB's StatefulSet and its headless Service (the pods' subdomain)."""
    return f"{cr['metadata']['name']}-db"


def claim_prefix(cr: Body) -> str:
    """Claims are named <template>-<statefulset>-<ordinal>, as the StatefulSet makes them."""
    return f"{CLAIM_TEMPLATE}-{db_name(cr)}-"


def labels_for(cr: Body) -> dict[str, str]:
    """Every pod of this CR, app and DB: the instance label keeps two CRs apart."""
    return owned_labels(APP, cr["metadata"]["name"])


def app_labels(cr: Body) -> dict[str, str]:
    return {**labels_for(cr), "app.kubernetes.io/component": "app"}


def db_labels(cr: Body) -> dict[str, str]:
    return {**labels_for(cr), "app.kubernetes.io/component": "database"}


_RESTRICTED = {"seccompProfile": {"type": "RuntimeDefault"}}


# --- the children ----------------------------------------------------------------------------


def desired_app_deployment(cr: Body) -> Manifest:
    labels = app_labels(cr)
    return {
        "apiVersion": DEPLOYMENT.api_version,
        "kind": DEPLOYMENT.kind,
        "metadata": child_metadata(cr, app_name(cr), labels),
        "spec": {
            "replicas": app_replicas(cr),
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "securityContext": _RESTRICTED,
                    "containers": [
                        {
                            "name": "bookstore",
                            "image": app_image(cr),
                            "resources": container_resources(cr, APP_RESOURCES_PATH),
                            "ports": [
                                {
                                    "name": "http",
                                    "containerPort": app_target_port(cr),
                                    "protocol": "TCP",
                                }
                            ],
                            "env": [
                                {"name": "MONGODB_HOST", "value": db_name(cr)},
                                {"name": "MONGODB_PORT", "value": str(db_port(cr))},
                            ],
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"]},
                            },
                        }
                    ],
                },
            },
        },
    }


def desired_app_service(cr: Body) -> Manifest:
    """The app's Service; for NodePort and LoadBalancer the cluster allocates the nodePort."""
    return {
        "apiVersion": SERVICE.api_version,
        "kind": SERVICE.kind,
        "metadata": child_metadata(cr, app_name(cr), app_labels(cr)),
        "spec": {
            "type": service_type(cr),
            "selector": app_labels(cr),
            "ports": [
                {
                    "name": APP_PORT_NAME,
                    "port": app_port(cr),
                    "targetPort": app_target_port(cr),
                    "protocol": "TCP",
                }
            ],
        },
    }


def desired_db_service(cr: Body) -> Manifest:
    """Headless: each DB pod gets a stable DNS name <pod>.<name>-db."""
    return {
        "apiVersion": SERVICE.api_version,
        "kind": SERVICE.kind,
        "metadata": child_metadata(cr, db_name(cr), db_labels(cr)),
        "spec": {
            "clusterIP": "None",
            "selector": db_labels(cr),
            "ports": [
                {
                    "name": "mongodb",
                    "port": db_port(cr),
                    "targetPort": db_port(cr),
                    "protocol": "TCP",
                }
            ],
        },
    }


def desired_db_statefulset(cr: Body) -> Manifest:
    """The whole StatefulSet, as created. Only `db_statefulset_mutable` is kept in line later."""
    labels = db_labels(cr)
    return {
        "apiVersion": STATEFULSET.api_version,
        "kind": STATEFULSET.kind,
        "metadata": child_metadata(cr, db_name(cr), labels),
        "spec": {
            "serviceName": db_name(cr),
            "replicas": db_replicas(cr),
            "selector": {"matchLabels": labels},
            "template": _db_pod_template(cr),
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": CLAIM_TEMPLATE, "labels": labels},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": db_size(cr)}},
                    },
                }
            ],
        },
    }


def db_statefulset_mutable(cr: Body) -> Manifest:
    """The fields of the StatefulSet the API lets us change after creation: replicas and the
    pod template. serviceName, selector and volumeClaimTemplates are immutable (a patch is a
    422), so a bigger dbSize grows the claims themselves instead (see `reconcile`)."""
    full = desired_db_statefulset(cr)
    return {
        **full,
        "spec": {"replicas": full["spec"]["replicas"], "template": full["spec"]["template"]},
    }


def _db_pod_template(cr: Body) -> Body:
    labels = db_labels(cr)
    return {
        "metadata": {"labels": labels},
        "spec": {
            # The mongo image starts as root to chown its data directory, then drops to
            # the mongodb user (999): keep only the capabilities that needs.
            "securityContext": {**_RESTRICTED, "fsGroup": 999},
            "containers": [
                {
                    "name": "mongodb",
                    "image": db_image(cr),
                    "resources": container_resources(cr, DB_RESOURCES_PATH),
                    "ports": [{"name": "mongodb", "containerPort": db_port(cr), "protocol": "TCP"}],
                    "args": ["--bind_ip_all", "--port", str(db_port(cr))],
                    "volumeMounts": [{"name": CLAIM_TEMPLATE, "mountPath": DB_MOUNT_PATH}],
                    "securityContext": {
                        "allowPrivilegeEscalation": False,
                        "capabilities": {"drop": ["ALL"], "add": ["CHOWN", "SETGID", "SETUID"]},
                    },
                }
            ],
        },
    }
