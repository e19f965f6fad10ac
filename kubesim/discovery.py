"""Discovery documents (/version, /api, /apis, APIResourceLists) as kube-apiserver serves them."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from kubesim.resources import Registry, ResourceType

KUBE_VERSION = {
    "major": "1",
    "minor": "28",
    "gitVersion": "v1.28.7-kubesim",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.21.7",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def api_versions(address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
    }


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def api_group_list(registry: Registry) -> dict[str, Any]:
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group(g, vs) for g, vs in registry.groups().items()],
    }


def api_group(registry: Registry, group: str) -> dict[str, Any] | None:
    versions = registry.groups().get(group)
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1"} | _group(group, versions)


def _hash(rt: ResourceType) -> str:
    digest = hashlib.sha256(f"{rt.group}/{rt.version}/{rt.kind}".encode()).digest()

    return base64.b64encode(digest[:8]).decode()


def resource_list(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    types = sorted(
        (rt for rt in registry.all() if rt.group == group and version in rt.served_versions),
        key=lambda rt: rt.plural,
    )
    if not types:
        return None
    resources: list[dict[str, Any]] = []
    for rt in types:
        entry: dict[str, Any] = {
            "name": rt.plural,
            "singularName": rt.singular,
            "namespaced": rt.namespaced,
            "kind": rt.kind,
            "verbs": sorted(rt.verbs),
        }
        if rt.short_names:
            entry["shortNames"] = list(rt.short_names)
        if rt.categories:
            entry["categories"] = list(rt.categories)
        entry["storageVersionHash"] = _hash(rt)
        resources.append(entry)
        for sub, verbs in sorted(rt.subresources().items()):
            sub_entry: dict[str, Any] = {
                "name": f"{rt.plural}/{sub}",
                "singularName": "",
                "namespaced": rt.namespaced,
                "kind": rt.kind,
                "verbs": list(verbs),
            }
            if sub == "scale":
                sub_entry |= {"group": "autoscaling", "version": "v1", "kind": "Scale"}
            elif sub == "binding":
                sub_entry["kind"] = "Binding"
            elif sub == "log":
                sub_entry["kind"] = "Pod"
            elif sub == "eviction":
                sub_entry |= {"group": "policy", "version": "v1", "kind": "Eviction"}
            elif sub == "finalize":
                sub_entry["kind"] = "Namespace"
            resources.append(sub_entry)
    gv = f"{group}/{version}" if group else version
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": gv,
        "resources": resources,
    }
