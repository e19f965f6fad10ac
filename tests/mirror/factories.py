"""Plain Kubernetes objects for mirror tests, shaped as the API returns them."""

from __future__ import annotations

import itertools
import uuid
from typing import Any

from controllers.base import Kind

MEMCACHED = Kind("cache.example.com", "v1alpha1", "Memcached", "memcacheds")
_versions = itertools.count(1)


def obj(
    kind: Kind,
    name: str,
    *,
    namespace: str = "default",
    uid: str = "",
    generation: int = 1,
    labels: dict[str, str] | None = None,
    owner: dict[str, Any] | None = None,
    spec: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": uid or str(uuid.uuid4()),
        "resourceVersion": str(next(_versions)),
        "generation": generation,
        "labels": labels or {},
        "creationTimestamp": "2026-11-22T17:00:00Z",
    }
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": owner["apiVersion"],
                "kind": owner["kind"],
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
            }
        ]
    return {
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": meta,
        "spec": spec or {},
        "status": status or {},
    }


def condition(type_: str, status: str) -> dict[str, str]:
    return {"type": type_, "status": status, "reason": "Test"}
