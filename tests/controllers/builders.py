"""Plain-dict objects for the unit tests: CRs and the pods a cluster would report."""

from __future__ import annotations

from typing import Any


def memcached(name: str = "memcached-sample", **spec: Any) -> dict[str, Any]:
    return _cr("cache.example.com/v1alpha1", "Memcached", name, spec)


def webserver(name: str = "webserver-sample", **spec: Any) -> dict[str, Any]:
    return _cr("my.domain/v1", "WebServer", name, spec)


def bookstore(name: str = "bookstore-sample", **spec: Any) -> dict[str, Any]:
    return _cr("blog.velotio.com/v1alpha1", "BookStore", name, spec)


def _cr(api_version: str, kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": "shop",
            "uid": f"uid-{name}",
            "generation": 2,
            "resourceVersion": "10",
        },
        "spec": spec,
    }


def pod(
    name: str,
    *,
    image: str,
    ready: bool = True,
    waiting: str | None = None,
    deleting: bool = False,
) -> dict[str, Any]:
    status: dict[str, Any] = {
        "phase": "Running" if ready else "Pending",
        "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
    }
    if waiting:
        status["containerStatuses"] = [
            {
                "name": "main",
                "image": image,
                "ready": False,
                "state": {"waiting": {"reason": waiting}},
            }
        ]
    metadata: dict[str, Any] = {"name": name, "namespace": "shop"}
    if deleting:
        metadata["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {"containers": [{"name": "main", "image": image}]},
        "status": status,
    }
