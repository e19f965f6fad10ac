"""Manifests, polling and the kubesim control API for the simulated-cluster tests."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from typing import Any

from kubernetes import client

from tests.support.waiting import wait_for as wait_for  # the suite's one wait_for

ALPHABET = set("bcdfghjklmnpqrstvwxz2456789")
MEMCACHED_IMAGE = "memcached:1.4.36-alpine"


def control(api: client.ApiClient, method: str, path: str, body: Any = None) -> Any:
    """Calls kubesim's control API (/_kubesim/...) on the server the client talks to."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        api.configuration.host.rstrip("/") + path,
        data=data,
        method=method,
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )
    ca = api.configuration.ssl_ca_cert  # kubesim's CA, from the kubeconfig
    context = ssl.create_default_context(cafile=ca) if ca else None
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        raise client.ApiException(status=exc.code, reason=exc.reason) from None


def make_unready(
    api: client.ApiClient, namespace: str, name: str, *, message: str = "", container: str = ""
) -> Any:
    """The pod's readiness probe fails (of `container` only, if given), with `message` as
    the probe's output if given, until `make_ready`: kubesim's /unready (kubesim only)."""
    given = {"message": message, "container": container}
    body = {k: v for k, v in given.items() if v}
    return control(api, "POST", f"/_kubesim/cluster/pods/{namespace}/{name}/unready", body)


def make_ready(api: client.ApiClient, namespace: str, name: str) -> Any:
    return control(api, "POST", f"/_kubesim/cluster/pods/{namespace}/{name}/ready")


def set_node_ready(api: client.ApiClient, node: str, *, ready: bool) -> Any:
    """The node's kubelet reports again, or stops reporting (kubesim only)."""
    return control(
        api, "POST", f"/_kubesim/cluster/nodes/{node}/{'ready' if ready else 'notready'}"
    )


def deployment(
    name: str, *, replicas: int = 3, image: str = MEMCACHED_IMAGE, **spec: Any
) -> dict[str, Any]:
    """The Deployment of the Memcached operator tutorial."""
    labels = {"app": "memcached", "memcached_cr": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "terminationGracePeriodSeconds": 5,
                    "containers": [
                        {
                            "name": "memcached",
                            "image": image,
                            "command": ["memcached", "-m=64", "-o", "modern", "-v"],
                            "ports": [{"containerPort": 11211, "name": "memcached"}],
                        }
                    ],
                },
            },
            **spec,
        },
    }


def statefulset(
    name: str, *, replicas: int = 3, policy: str = "OrderedReady", image: str = "nginx:1.25"
) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "podManagementPolicy": policy,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "terminationGracePeriodSeconds": 5,
                    "containers": [{"name": "web", "image": image}],
                },
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                }
            ],
        },
    }


def daemonset(name: str, **pod_spec: object) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "agent", "image": "busybox:1.36"}], **pod_spec},
            },
        },
    }


def pod(name: str, *, image: str = "registry.k8s.io/pause:3.9", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "terminationGracePeriodSeconds": 5,
            "containers": [{"name": "main", "image": image}],
            **spec,
        },
    }


def condition(obj: Any, type_: str) -> Any:
    for cond in (obj.status.conditions or []) if obj.status else []:
        if cond.type == type_:
            return cond
    return None


def create_limit_range(
    core: client.CoreV1Api, namespace: str, name: str, **item: dict[str, str]
) -> None:
    """Creates LimitRange `name` of one Container item: `default=`, `max=`, …"""
    body = {"metadata": {"name": name}, "spec": {"limits": [{"type": "Container", **item}]}}
    core.create_namespaced_limit_range(namespace, body)


def create_quota(core: client.CoreV1Api, namespace: str, hard: dict[str, str]) -> None:
    """Creates ResourceQuota `q` and waits for its status: until the quota controller has
    counted, kube-apiserver refuses every pod the quota covers ("status unknown")."""
    body = {"metadata": {"name": "q"}, "spec": {"hard": hard}}
    core.create_namespaced_resource_quota(namespace, body)

    def counted() -> Any:
        status = core.read_namespaced_resource_quota("q", namespace).status
        return status and set(status.used or ()) == set(hard)

    wait_for(counted, what=f"quota q's status in {namespace}")


def is_ready(p: client.V1Pod) -> bool:
    cond = condition(p, "Ready")
    return cond is not None and cond.status == "True"


def pods_of(core: client.CoreV1Api, namespace: str, selector: str) -> list[client.V1Pod]:
    return core.list_namespaced_pod(namespace, label_selector=selector).items


def events_for(core: client.CoreV1Api, namespace: str, name: str) -> list[client.CoreV1Event]:
    return [
        e for e in core.list_namespaced_event(namespace).items if e.involved_object.name == name
    ]


def schedulable_nodes(core: client.CoreV1Api) -> list[client.V1Node]:
    """Ready nodes an ordinary pod can land on (a tainted control plane does not count)."""

    def usable(n: client.V1Node) -> bool:
        ready = condition(n, "Ready")
        taints = [t for t in n.spec.taints or [] if t.effect in ("NoSchedule", "NoExecute")]
        return (
            ready is not None and ready.status == "True" and not taints and not n.spec.unschedulable
        )

    return [n for n in core.list_node().items if usable(n)]


def create_limits(core: client.CoreV1Api, namespace: str, name: str, *items: Any) -> None:
    """Creates LimitRange `name` of these items (each with its `type`)."""
    body = {"metadata": {"name": name}, "spec": {"limits": list(items)}}
    core.create_namespaced_limit_range(namespace, body)


def claim(name: str, size: str = "1Gi", storage_class: str | None = None) -> dict[str, Any]:
    """A PersistentVolumeClaim of the default StorageClass (standard, which expands) unless
    `storage_class` is given."""
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": size}},
    }
    if storage_class:
        spec["storageClassName"] = storage_class
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": spec}  # fmt: skip


def create_bound_claim(
    core: client.CoreV1Api, namespace: str, name: str, size: str
) -> client.V1PersistentVolumeClaim:
    """Creates a claim of the default class and waits until it is Bound: only a bound claim
    may grow."""
    core.create_namespaced_persistent_volume_claim(namespace, claim(name, size))

    def bound() -> Any:
        found = core.read_namespaced_persistent_volume_claim(name, namespace)
        return found.status.phase == "Bound" and found

    result: client.V1PersistentVolumeClaim = wait_for(bound, what=f"claim {name} Bound")
    return result


def grow_claim(core: client.CoreV1Api, namespace: str, name: str, size: str) -> Any:
    body = {"spec": {"resources": {"requests": {"storage": size}}}}
    return core.patch_namespaced_persistent_volume_claim(name, namespace, body)
