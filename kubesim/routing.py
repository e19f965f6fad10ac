"""Parse Kubernetes API paths into what they address."""

from __future__ import annotations

from dataclasses import dataclass

from kubesim.resources import Registry, ResourceType


@dataclass
class Target:
    rt: ResourceType
    version: str
    namespace: str | None
    name: str | None
    subresource: str | None
    watch_path: bool  # the legacy /watch/ prefix


def parse(registry: Registry, parts: list[str]) -> Target | None:
    """parts: the path split on "/" without the empty first element.

    Returns None when the path is not a resource path kubesim serves; resource types that do
    not exist yield a Target-less None too (the caller answers 404).
    """
    if parts[:2] == ["api", "v1"]:
        group, version, rest = "", "v1", parts[2:]
    elif parts and parts[0] == "apis" and len(parts) >= 3:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    watch = False
    if rest and rest[0] == "watch":
        watch, rest = True, rest[1:]
    if not rest:
        return None
    namespace = None
    if (
        rest[0] == "namespaces"
        and len(rest) >= 3
        and not (group == "" and len(rest) == 3 and rest[2] in ("status", "finalize"))
    ):
        namespace, rest = rest[1], rest[2:]
    plural = rest[0]
    rt = registry.lookup(group, version, plural)
    if rt is None:
        return None
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    if len(rest) > 3:
        return None
    return Target(rt, version, namespace, name, sub, watch)
