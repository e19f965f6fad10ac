"""The Memcached operator written with kopf: the peer the benchmarks compare against.

What a careful kopf user would write, kept minimal but faithful to our operator:
one Deployment of spec.size pods per CR (the very same desired object, from
controllers.memcached.desired, so both operators do the same work), status.nodes
(the CR's live pods, sorted), status.readyReplicas and status.observedGeneration.
Pods are followed through a kopf index (kopf's informer cache), so a pod event
costs a status write only when the status changes. One API client per process,
built at startup and reused by every handler (its connection pool kept, so a TLS
server costs one handshake per connection, not one per call), as a careful user
writes it. kopf's defaults are kept (its annotations for change detection, its
Events for handler outcomes): they are what a user of kopf gets.

Run: kopf run --standalone --namespace NS bench/peers/kopf_memcached.py
"""

from __future__ import annotations

import threading
from typing import Any

import kopf
import kubernetes

from controllers.memcached.desired import MEMCACHED, desired_deployment

NAME_LABEL = "app.kubernetes.io/name"
INSTANCE_LABEL = "app.kubernetes.io/instance"
PODS = {NAME_LABEL: "memcached"}

_published: dict[tuple[str, str], dict[str, Any]] = {}
_client: list[kubernetes.client.ApiClient] = []  # the process's one client, set at startup
# kopf handles two pods' events in parallel threads: one lock per CR keeps a status computed
# from an older index from being written after a newer one.
_owner_locks: dict[tuple[str, str], threading.Lock] = {}


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    kubernetes.config.load_kube_config()
    _client.append(kubernetes.client.ApiClient())
    settings.watching.server_timeout = 300


@kopf.on.resume(MEMCACHED.group, MEMCACHED.version, MEMCACHED.plural)
@kopf.on.create(MEMCACHED.group, MEMCACHED.version, MEMCACHED.plural)
@kopf.on.update(MEMCACHED.group, MEMCACHED.version, MEMCACHED.plural, field="spec")
def reconcile(body: kopf.Body, meta: kopf.Meta, patch: kopf.Patch, **_: Any) -> None:
    want = desired_deployment(dict(body))
    apps = kubernetes.client.AppsV1Api(_client[0])
    try:
        apps.patch_namespaced_deployment(
            meta["name"], meta["namespace"], {"spec": {"replicas": want["spec"]["replicas"],
                                                       "template": want["spec"]["template"]}}
        )  # fmt: skip
    except kubernetes.client.ApiException as exc:
        if exc.status != 404:
            raise kopf.TemporaryError(f"Deployment patch failed: {exc.reason}", delay=1) from exc
        # The client takes a plain dict body; its type hints name only V1Deployment.
        apps.create_namespaced_deployment(meta["namespace"], want)  # type: ignore[arg-type]
    patch.status["observedGeneration"] = meta["generation"]


@kopf.index("", "v1", "pods", labels=PODS, when=lambda meta, **_: not meta.get("deletionTimestamp"))
def memcached_pods(
    namespace: str | None, name: str, labels: kopf.Labels, status: kopf.Status, **_: Any
) -> dict[tuple[str, str], tuple[str, bool]]:
    assert namespace is not None  # pods are namespaced
    ready = any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )
    return {(namespace, labels.get(INSTANCE_LABEL, "")): (name, ready)}


# kopf hands indices over as extra keyword arguments, which its WatchingFn protocol cannot name.
@kopf.on.event("", "v1", "pods", labels=PODS)  # type: ignore[arg-type]
def pod_changed(
    namespace: str | None,
    labels: kopf.Labels,
    memcached_pods: kopf.Index[tuple[str, str], tuple[str, bool]],
    **_: Any,
) -> None:
    assert namespace is not None  # pods are namespaced
    owner = labels.get(INSTANCE_LABEL)
    if not owner:
        return
    with _owner_locks.setdefault((namespace, owner), threading.Lock()):  # atomic in CPython
        pods = list(memcached_pods.get((namespace, owner), []))
        status = {
            "nodes": sorted(name for name, _ in pods),
            "readyReplicas": sum(1 for _, ready in pods if ready),
        }
        if _published.get((namespace, owner)) == status:
            return
        try:
            kubernetes.client.CustomObjectsApi(_client[0]).patch_namespaced_custom_object_status(
                MEMCACHED.group, MEMCACHED.version, namespace, MEMCACHED.plural, owner,
                {"status": status},
            )  # fmt: skip
        except kubernetes.client.ApiException as exc:
            if exc.status != 404:  # a CR deleted meanwhile has no status to write
                raise
            return
        _published[(namespace, owner)] = status
