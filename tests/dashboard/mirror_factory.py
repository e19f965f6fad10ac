"""Builds mirror rows (KubeObject) directly, for the read-only pages' tests and benchmarks."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from controllers.base import Body, Kind
from opsboard.mirror.history import spec_versions_record
from opsboard.mirror.models import KubeObject
from opsboard.mirror.writer import mirror_apply

MEMCACHED_API = "cache.example.com/v1alpha1"


def mirror_object(
    kind: str,
    name: str,
    *,
    namespace: str = "default",
    api_version: str = "v1",
    owner: KubeObject | None = None,
    spec: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    health: str = "Unknown",
    generation: int = 1,
    observed_generation: int | None = 1,
    age: timedelta = timedelta(minutes=5),
    save: bool = True,
) -> KubeObject:
    uid = str(uuid.uuid4())
    created = datetime.now(UTC) - age
    owner_refs = (
        [{"apiVersion": owner.api_version, "kind": owner.kind, "name": owner.name,
          "uid": owner.uid, "controller": True}]
        if owner else []
    )  # fmt: skip
    metadata = {
        "name": name, "namespace": namespace, "uid": uid, "resourceVersion": "1",
        "generation": generation, "labels": labels or {}, "ownerReferences": owner_refs,
        "creationTimestamp": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }  # fmt: skip
    body = {"apiVersion": api_version, "kind": kind, "metadata": metadata}
    body |= {"spec": spec or {}, "status": status or {}}
    obj = KubeObject(
        api_version=api_version, kind=kind, namespace=namespace, name=name, uid=uid,
        resource_version="1", generation=generation, observed_generation=observed_generation,
        labels=labels or {}, owner_references=owner_refs, owner_uid=owner.uid if owner else "",
        spec=spec or {}, status=status or {}, body=body, health=health, created_at=created,
    )  # fmt: skip
    if save:
        obj.save()
    return obj


def running_pod(name: str, *, owner: KubeObject, labels: dict[str, str], ready: bool = True,
                namespace: str = "default", save: bool = True) -> KubeObject:  # fmt: skip
    status = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        "containerStatuses": [{"name": "main", "ready": ready, "restartCount": 0}],
    }
    return mirror_object(
        "Pod", name, namespace=namespace, owner=owner, labels=labels, status=status,
        spec={"nodeName": "kubesim-node-1"}, health="Available" if ready else "Progressing",
        save=save,
    )  # fmt: skip


def memcached_with_pods(name: str, *, size: int, namespace: str = "default") -> KubeObject:
    """A Memcached CR with its Deployment, ReplicaSet and `size` ready pods, as the mirror
    holds them once the operator has converged."""
    labels = {"app.kubernetes.io/name": "memcached", "app.kubernetes.io/instance": name}
    pods = [f"{name}-7d9f-{i:05d}" for i in range(size)]
    conditions = [
        {"type": "Available", "status": "True", "reason": "PodsReady", "message": "ready"},
        {"type": "Progressing", "status": "False", "reason": "Settled", "message": ""},
    ]
    cr = mirror_object(
        "Memcached", name, namespace=namespace, api_version=MEMCACHED_API,
        spec={"size": size, "image": "memcached:1.4.36-alpine"},
        status={"nodes": pods, "readyReplicas": size, "conditions": conditions,
                "observedGeneration": 1},
        health="Available",
    )  # fmt: skip
    deployment = mirror_object(
        "Deployment", name, namespace=namespace, api_version="apps/v1", owner=cr,
        labels=labels, spec={"replicas": size}, status={"readyReplicas": size},
    )  # fmt: skip
    replicaset = mirror_object(
        "ReplicaSet", f"{name}-7d9f", namespace=namespace, api_version="apps/v1",
        owner=deployment, labels=labels, spec={"replicas": size}, status={"readyReplicas": size},
    )  # fmt: skip
    KubeObject.objects.bulk_create(
        [running_pod(p, owner=replicaset, labels=labels, namespace=namespace, save=False)
         for p in pods]
    )  # fmt: skip
    return cr


def mirror_as_watcher(kind: Kind, body: Body, event: str = "MODIFIED") -> KubeObject:
    """What the watcher does on an event for an object read from the cluster: mirror it and
    record its spec's version (the change history's)."""
    spec_versions_record(mirror_apply(kind=kind, events=[(event, body)]))
    return KubeObject.objects.get(uid=body["metadata"]["uid"])
