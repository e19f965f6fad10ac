"""Kubernetes RBAC, small enough to read: does a set of manifests let an identity make a request?

Mirrors kube-apiserver: the request's attributes come from its path the way RequestInfoFactory
derives them, and the rule matching is that of the RBAC authorizer (verbs, apiGroups,
resources with "*" and "*/subresource", resourceNames; Roles count only in their namespace).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# Every authenticated identity may read these (the system:discovery, system:basic-user and
# system:public-info-viewer ClusterRoles of every cluster).
DISCOVERY_PREFIXES = ("/api", "/apis", "/version", "/openapi", "/healthz", "/livez", "/readyz")


@dataclass(frozen=True)
class Request:
    verb: str
    group: str
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""

    def __str__(self) -> str:
        what = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        where = f" in {self.namespace}" if self.namespace else ""
        return f"{self.verb} {what}.{self.group or 'core'} {self.name}{where}".strip()


def parse(method: str, path: str, *, watch: bool = False) -> Request | None:
    """The resource request `method path` makes, or None for a non-resource path."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, rest = parts[1], parts[3:]
    else:
        return None
    if rest[0] == "watch":
        watch, rest = True, rest[1:]
    namespace = ""
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    verb = {
        "GET": "watch" if watch else ("get" if name else "list"),
        "HEAD": "get" if name else "list",
        "POST": "create",
        "PUT": "update",
        "PATCH": "patch",
        "DELETE": "delete" if name else "deletecollection",
    }[method]
    return Request(verb, group, resource, subresource, namespace, name)


@dataclass(frozen=True)
class Grant:
    rules: tuple[dict[str, Any], ...]
    namespace: str | None  # None: cluster-wide (a ClusterRoleBinding)


def grants_for(manifests: Iterable[dict[str, Any]], *, account: str, namespace: str) -> list[Grant]:
    """What the bindings in `manifests` give the ServiceAccount `namespace/account`."""
    docs = list(manifests)
    roles = {
        (doc["kind"], doc["metadata"].get("namespace", ""), doc["metadata"]["name"]): doc
        for doc in docs
        if doc["kind"] in {"Role", "ClusterRole"}
    }
    grants = []
    for binding in docs:
        if binding["kind"] not in {"RoleBinding", "ClusterRoleBinding"}:
            continue
        bound_here = binding["metadata"].get("namespace", "")
        if not any(
            s["kind"] == "ServiceAccount"
            and s["name"] == account
            and s.get("namespace", bound_here) == namespace
            for s in binding.get("subjects", [])
        ):
            continue
        ref = binding["roleRef"]
        role_namespace = bound_here if ref["kind"] == "Role" else ""
        role = roles.get((ref["kind"], role_namespace, ref["name"]))
        if role is None:
            continue  # a binding to a role that does not exist grants nothing
        scope = None if binding["kind"] == "ClusterRoleBinding" else bound_here
        grants.append(Grant(tuple(role.get("rules") or ()), scope))
    return grants


def _resource_matches(rule_resource: str, request: Request) -> bool:
    if rule_resource == "*":
        return True
    if not request.subresource:
        return rule_resource == request.resource
    return rule_resource in (
        f"{request.resource}/{request.subresource}",
        f"*/{request.subresource}",
    )


def rule_allows(rule: dict[str, Any], request: Request) -> bool:
    names = rule.get("resourceNames") or []
    return (
        bool({"*", request.verb} & set(rule.get("verbs", [])))
        and bool({"*", request.group} & set(rule.get("apiGroups", [])))
        and any(_resource_matches(r, request) for r in rule.get("resources", []))
        and (not names or request.name in names)
    )


def allowed(grants: Iterable[Grant], request: Request) -> bool:
    return any(
        (grant.namespace is None or grant.namespace == request.namespace)
        and any(rule_allows(rule, request) for rule in grant.rules)
        for grant in grants
    )


def discovery(method: str, path: str) -> bool:
    return method in {"GET", "HEAD"} and path.startswith(DISCOVERY_PREFIXES)
