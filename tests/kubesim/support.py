"""Requests, manifests and waiting for the kubesim contract suite."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from tests.support.waiting import wait_for as wait_for  # the suite's one wait_for


def kubesim_cli(server: str, command: str, *args: str) -> Any:
    """`python -m kubesim COMMAND --server SERVER ARGS...` (fault, cluster): its JSON answer."""
    done = subprocess.run(
        [sys.executable, "-m", "kubesim", command, "--server", server, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


@contextmanager
def established_crd(api: client.ApiClient, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Create the CRD `body` and wait until it is Established; delete it afterwards."""
    ext = client.ApiextensionsV1Api(api)
    ext.create_custom_resource_definition(body)

    def established() -> bool:
        got = ext.read_custom_resource_definition(body["metadata"]["name"])
        return any(c.type == "Established" and c.status == "True"
                   for c in got.status.conditions or [])  # fmt: skip

    try:
        wait_for(established, what="the CRD to be established")
        yield body
    finally:
        ext.delete_custom_resource_definition(body["metadata"]["name"])


def memcached_crd(
    *,
    group: str = "cache.example.com",
    plural: str = "memcacheds",
    kind: str = "Memcached",
    scope: str = "Namespaced",
) -> dict[str, Any]:
    """A CRD shaped like the operator tutorial's, with validation, defaults and subresources."""
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["size"],
                "properties": {
                    "size": {"type": "integer", "minimum": 0, "maximum": 10},
                    "image": {"type": "string", "default": "memcached:1.6", "minLength": 1},
                    "mode": {"type": "string", "enum": ["fast", "safe"]},
                    "ratio": {"type": "number", "exclusiveMinimum": True, "minimum": 0},
                    "label": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 8},
                    "port": {"x-kubernetes-int-or-string": True},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    "note": {"type": "string", "nullable": True},
                },
            },
            "status": {
                "type": "object",
                "properties": {
                    "replicas": {"type": "integer"},
                    "selector": {"type": "string"},
                    "nodes": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    }
    version = {
        "name": "v1alpha1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": schema},
        "subresources": {
            "status": {},
            "scale": {
                "specReplicasPath": ".spec.size",
                "statusReplicasPath": ".status.replicas",
                "labelSelectorPath": ".status.selector",
            },
        },
        "additionalPrinterColumns": [
            {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
            {"name": "Image", "type": "string", "jsonPath": ".spec.image"},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        ],
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": plural,
                "singular": kind.lower(),
                "shortNames": ["mc"],
            },
            "scope": scope,
            "versions": [version],
        },
    }


def workload(kind: str, name: str, selector: dict[str, Any] | None = None) -> dict[str, Any]:
    """An apps/v1 Deployment, ReplicaSet, StatefulSet or DaemonSet of no replicas, its pods
    labelled app=`name`; `selector` defaults to that label."""
    spec: dict[str, Any] = {
        "selector": selector or {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]},
        },
    }
    if kind != "DaemonSet":
        spec["replicas"] = 0
    if kind == "StatefulSet":
        spec["serviceName"] = name
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name}, "spec": spec}


def to_yaml(*docs: dict[str, Any]) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False)


def write_yaml(path: Path, *docs: dict[str, Any]) -> Path:
    path.write_text(to_yaml(*docs))
    return path


class Raw:
    """A response to a hand-made request, for what the typed client cannot express."""

    def __init__(self, status: int, headers: Any, data: bytes) -> None:
        self.status = status
        self.headers = headers
        self.data = data

    def json(self) -> Any:
        return json.loads(self.data)


def auth_headers(api: Any) -> dict[str, str]:
    """The client's credentials, as the headers it sends them in (a bearer token)."""
    return {
        auth["key"]: auth["value"]
        for auth in api.configuration.auth_settings().values()
        if auth.get("in") == "header" and auth.get("value")
    }


def raw(
    api: Any,
    method: str,
    path: str,
    *,
    body: bytes | dict | list | None = None,
    content_type: str = "application/json",
    accept: str = "application/json",
    headers: dict[str, str] | None = None,
    preload: bool = True,
) -> Raw:
    """Send one request with the client's own connection pool, TLS settings and credentials."""
    hdrs = {"Accept": accept, **(headers or {}), **auth_headers(api)}
    payload: bytes | None = None
    if body is not None:
        hdrs["Content-Type"] = content_type
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    resp = api.rest_client.pool_manager.request(
        method,
        api.configuration.host + path,
        body=payload,
        headers=hdrs,
        preload_content=preload,
        timeout=30,
        retries=False,
    )
    return Raw(resp.status, resp.headers, resp.data if preload else b"")
