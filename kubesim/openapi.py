"""OpenAPI v3 documents: the index and one document per group-version.

kubectl reads them to learn that the server validates fields itself (the `fieldValidation`
parameter on PATCH operations), to find a kind's schema for `apply` and `explain`. Custom
resources carry their CRD schema; built-in kinds carry the list merge keys strategic merge
patch needs and otherwise accept any fields.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kubesim.jsonutil import dumps
from kubesim.resources import Registry, ResourceType
from kubesim.strategic import MERGE_KEYS

_PARAMS = ("dryRun", "fieldManager", "fieldValidation", "pretty")
V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
# OpenAPI v2 is served empty: clients use the v3 documents; v2 only has to parse.
V2_EMPTY = {
    "swagger": "2.0",
    "info": {"title": "Kubernetes", "version": "v1.32.0"},
    "paths": {},
    "definitions": {},
}


def _gv_path(rt: ResourceType, version: str) -> str:
    return f"api/{version}" if not rt.group else f"apis/{rt.group}/{version}"


def _schema_name(rt: ResourceType, version: str) -> str:
    """As kube-apiserver names its definitions: the Go package for built-in kinds
    (io.k8s.api.networking.v1.NetworkPolicy), the reversed group for custom resources."""
    if rt.crd:
        return f"{'.'.join(reversed(rt.group.split('.')))}.{version}.{rt.kind}"
    if rt.group == "apiextensions.k8s.io":
        return f"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{version}.{rt.kind}"
    return f"io.k8s.api.{rt.group.split('.')[0] or 'core'}.{version}.{rt.kind}"


def _merge_key_props() -> dict[str, Any]:
    """Fields whose lists strategic merge patch merges by key, found anywhere in a spec."""
    props: dict[str, Any] = {}
    for (field, _parent), key in MERGE_KEYS.items():
        props.setdefault(
            field,
            {
                "type": "array",
                "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "x-kubernetes-patch-merge-key": key,
                "x-kubernetes-patch-strategy": "merge",
            },
        )
    return props


def _builtin_schema(rt: ResourceType) -> dict[str, Any]:
    return {
        "type": "object",
        "description": f"{rt.kind} (served by kubesim)",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
        "x-kubernetes-preserve-unknown-fields": True,
    }


def _cr_schema(rt: ResourceType, version: str) -> dict[str, Any]:
    root = dict((rt.version_info.get(version) or {}).get("schema") or {"type": "object"})
    props = dict(root.get("properties") or {})
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    props["metadata"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    root["properties"] = props
    return root


def _operation(rt: ResourceType, version: str, verb: str) -> dict[str, Any]:
    gvk = {"group": rt.group, "version": version, "kind": rt.kind}
    return {
        "operationId": f"{verb}{rt.kind}",
        "parameters": [{"name": p, "in": "query", "schema": {"type": "string"}} for p in _PARAMS],
        "responses": {"200": {"description": "OK"}},
        "x-kubernetes-action": verb,
        "x-kubernetes-group-version-kind": gvk,
    }


def document(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    types = [rt for rt in registry.all() if rt.group == group and version in rt.served_versions]
    if not types:
        return None
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for rt in types:
        prefix = "/" + _gv_path(rt, version)
        ns = "/namespaces/{namespace}" if rt.namespaced else ""
        paths[f"{prefix}{ns}/{rt.plural}"] = {
            "get": _operation(rt, version, "list"),
            "post": _operation(rt, version, "post"),
        }
        paths[f"{prefix}{ns}/{rt.plural}/{{name}}"] = {
            verb: _operation(rt, version, action)
            for verb, action in (
                ("get", "get"),
                ("put", "put"),
                ("patch", "patch"),
                ("delete", "delete"),
            )
        }
        schema = _cr_schema(rt, version) if rt.crd else _builtin_schema(rt)
        if not rt.crd:
            schema["properties"]["spec"]["properties"] = _merge_key_props()
        schema["x-kubernetes-group-version-kind"] = [
            {"group": rt.group, "version": version, "kind": rt.kind}
        ]
        schemas[_schema_name(rt, version)] = schema
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }


def index(registry: Registry) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    gvs = {("", "v1")} | {(g, v) for g, vs in registry.groups().items() for v in vs}
    for group, version in sorted(gvs):
        doc = document(registry, group, version)
        if doc is None:
            continue
        key = f"apis/{group}/{version}" if group else f"api/{version}"
        digest = hashlib.sha512(dumps(doc)).hexdigest()[:32].upper()
        paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
    return {"paths": paths}


def v3(registry: Registry, parts: list[str]) -> dict[str, Any] | None:
    if not parts:
        return index(registry)
    if parts[0] == "api" and len(parts) == 2:
        return document(registry, "", parts[1])
    if parts[0] == "apis" and len(parts) == 3:
        return document(registry, parts[1], parts[2])
    return None
