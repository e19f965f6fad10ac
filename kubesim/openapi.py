"""OpenAPI v3 documents: the index, one document per group-version, and the small ones of
/api, /apis, each built-in group and /version.

kubectl reads them to learn that the server validates fields itself (the `fieldValidation`
parameter on PATCH operations), to find a kind's schema for `apply` and `explain`. Built-in
group-versions are kube-apiserver v1.28.7's own documents (openapi_v3/, written by
openapi_vendor.py), read from disk when a client asks for one, so they cost nothing at
start-up and are not kept. Custom resources carry their CRD schema. A kind kubesim serves
that such a document lacks gets a skeleton: the list merge keys strategic merge patch needs,
any other field accepted.
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import hashlib
import pathlib
import time
from email.utils import formatdate
from typing import Any

from kubesim.jsonutil import dumps, loads
from kubesim.resources import Registry, ResourceType
from kubesim.strategic import MERGE_KEYS

_PARAMS = ("dryRun", "fieldManager", "fieldValidation", "pretty")
V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
# OpenAPI v2 is served empty: clients use the v3 documents; v2 only has to parse.
V2_EMPTY = {
    "swagger": "2.0",
    "info": {"title": "Kubernetes", "version": "v1.28.7"},
    "paths": {},
    "definitions": {},
}


VENDORED = pathlib.Path(__file__).with_name("openapi_v3")


def vendored_file(path: str) -> pathlib.Path:
    """A document's file, named for its path as the Kubernetes repo names them
    (api__v1_openapi.json, apis__apps_openapi.json), gzipped."""
    return VENDORED / (path.replace("/", "__") + ".json.gz")


def gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def fixed_paths(registry: Registry) -> list[str]:
    """The documents kube-apiserver lists beside its group-versions' that kubesim serves too:
    discovery's /api, /apis and each built-in group's /apis/GROUP (a CRD's group has none),
    and /version. They never change. (/logs and OIDC discovery are not served: not listed.)"""
    groups = sorted({rt.group for rt in registry.all() if rt.group and not rt.crd})
    return ["api", "apis", *(f"apis/{group}" for group in groups), "version"]


def _hash(data: bytes) -> str:
    """kube-openapi's: the whole SHA-512, in upper-case hex."""
    return hashlib.sha512(data).hexdigest().upper()


def _gv_path(rt: ResourceType, version: str) -> str:
    return gv_path(rt.group, version)


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


def _vendored(group: str, version: str) -> bytes | None:
    path = vendored_file(gv_path(group, version))
    return gzip.decompress(path.read_bytes()) if path.exists() else None


@functools.cache
def _vendored_digest(group: str, version: str) -> bytes | None:
    path = vendored_file(gv_path(group, version))
    return hashlib.sha512(path.read_bytes()).digest() if path.exists() else None


@functools.cache
def _fixed(path: str) -> tuple[bytes, str]:
    """A fixed document (a few KB) and the hash of its content, as the server hashes it."""
    data = gzip.decompress(vendored_file(path).read_bytes())
    return data, _hash(data)


def _kinds(doc: dict[str, Any]) -> set[tuple[str, str, str]]:
    schemas = doc["components"]["schemas"].values()
    return {
        (gvk["group"], gvk["version"], gvk["kind"])
        for schema in schemas
        for gvk in schema.get("x-kubernetes-group-version-kind", ())
    }


def _served(registry: Registry, group: str, version: str) -> list[ResourceType]:
    return [rt for rt in registry.all() if rt.group == group and version in rt.served_versions]


def document(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    types = _served(registry, group, version)
    if not types:
        return None
    vendored = _vendored(group, version)
    doc: dict[str, Any]
    if vendored is None:
        doc = {
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": "v1.28.7"},
            "paths": {},
            "components": {"schemas": {}},
        }
    else:
        doc = loads(vendored)
        known = _kinds(doc)
        types = [rt for rt in types if (rt.group, version, rt.kind) not in known]
    paths: dict[str, Any] = doc["paths"]
    schemas: dict[str, Any] = doc["components"]["schemas"]
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
    return doc


def document_bytes(registry: Registry, group: str, version: str) -> bytes | None:
    """A vendored document that has every kind served is sent as it is on disk: parsed, the
    api/v1 one would take some 10 MB for a moment, which the process would keep."""
    vendored = _vendored(group, version)
    if vendored is not None:
        types = _served(registry, group, version)
        names = [f'"{_schema_name(rt, version)}":{{'.encode() for rt in types]
        if types and all(name in vendored for name in names):
            return vendored
    doc = document(registry, group, version)
    return None if doc is None else dumps(doc)


def _digest(registry: Registry, group: str, version: str) -> str | None:
    """The document's hash in the index, which kubectl caches documents by. A vendored
    document's is that of its inputs (the file, the kinds served), so that the index
    reads no document; any other's is that of its content."""
    types = _served(registry, group, version)
    if not types:
        return None
    vendored = _vendored_digest(group, version)
    if vendored is not None and not any(rt.crd for rt in types):
        kinds = ",".join(sorted(rt.kind for rt in types)).encode()
        return _hash(vendored + kinds)
    doc = document(registry, group, version)
    return None if doc is None else _hash(dumps(doc))


def index(registry: Registry) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    gvs = {("", "v1")} | {(g, v) for g, vs in registry.groups().items() for v in vs}
    digests = {path: _fixed(path)[1] for path in fixed_paths(registry)}
    for group, version in gvs:
        digest = _digest(registry, group, version)
        if digest is not None:
            digests[gv_path(group, version)] = digest
    for path in sorted(digests):  # in the order of Go's encoding of a map
        paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digests[path]}"}
    return {"paths": paths}


@dataclasses.dataclass(frozen=True)
class Answer:
    code: int
    body: bytes
    headers: dict[str, str]


def _group_version(parts: list[str]) -> tuple[str, str] | None:
    if parts[:1] == ["api"] and len(parts) == 2:
        return "", parts[1]
    if parts[:1] == ["apis"] and len(parts) == 3:
        return parts[1], parts[2]
    return None


def v3(
    registry: Registry, parts: list[str], *, asked: str | None, if_none_match: str | None
) -> Answer:
    """As kube-apiserver answers: a document asked for by its current hash may be kept for
    good (kubectl's HTTP cache then never asks again), an old hash redirects to the current
    one, and an unchanged document is not sent again to a client that has it. A path that
    names no document is an empty 404."""
    if not parts:
        return Answer(200, dumps(index(registry)), {})
    path, gv = "/".join(parts), _group_version(parts)
    if gv is not None:
        digest = _digest(registry, *gv)
    else:
        digest = _fixed(path)[1] if path in fixed_paths(registry) else None
    if digest is None:
        return Answer(404, b"", {})
    if asked is not None and asked != digest:
        location = f"/openapi/v3/{path}?hash={digest}"
        return Answer(301, b"", {"Location": location})
    now = time.time()
    headers = {"Date": formatdate(now, usegmt=True), "ETag": f'"{digest}"', "Vary": "Accept"}
    if asked is not None:
        headers["Cache-Control"] = "public, immutable"
        headers["Expires"] = formatdate(now + 365 * 24 * 3600, usegmt=True)
    if if_none_match == headers["ETag"]:
        return Answer(304, b"", headers)
    body = _fixed(path)[0] if gv is None else document_bytes(registry, *gv) or b""
    return Answer(200, body, headers)
