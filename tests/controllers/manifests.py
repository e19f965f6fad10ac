"""The operators' manifests as data: CRDs, RBAC and samples from k8s/."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from controllers.bookstore.desired import db_labels

K8S = Path(__file__).resolve().parents[2] / "k8s"
CRD_FILES = sorted((K8S / "crd").glob("*_*.yaml"))
SAMPLE_FILES = sorted((K8S / "samples").glob("*_*.yaml"))


def load(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


Grant = tuple[str, str, str]  # (apiGroup, resource, verb)


def grants(rules: list[dict[str, Any]]) -> set[Grant]:
    """Every (apiGroup, resource, verb) a list of RBAC rules allows, spelled out."""
    return {
        (group, resource, verb)
        for rule in rules
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def operator_grants() -> set[Grant]:
    """What the operator's ServiceAccount may do: its Role rules and leader election's."""
    [role] = load(K8S / "rbac" / "role.yaml")
    [leases] = load(K8S / "rbac" / "leader_election_role.yaml")
    return grants(role["rules"]) | grants(leases["rules"])


def grants_used(records: Iterable[Any], *, except_agent: str) -> set[Grant]:
    """The (apiGroup, resource, verb) of each call in kubesim's request log, but those of
    `except_agent` (the test's own client)."""
    return {
        (_group(r.path), _resource(r.resource, r.subresource), r.verb)
        for r in records
        if r.user_agent != except_agent
    }


def _group(path: str) -> str:
    parts = path.split("?")[0].strip("/").split("/")
    return parts[1] if parts[0] == "apis" else ""


def _resource(resource: str, subresource: str) -> str:
    plural = resource.split(".", 1)[0]  # kubesim names it kubectl-style: "deployments.apps"
    return f"{plural}/{subresource}" if subresource else plural


def crd(plural: str) -> dict[str, Any]:
    return next(
        doc for path in CRD_FILES for doc in load(path) if doc["spec"]["names"]["plural"] == plural
    )


def db_claim(namespace: str, size: str, *, storage_class: str | None = None) -> dict[str, Any]:
    """The claim of BookStore shop's first DB pod, made before the BookStore: its
    StatefulSet then uses it as it is (of that class, that size)."""
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": size}},
    }
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": "data-shop-db-0",
            "namespace": namespace,
            "labels": db_labels({"metadata": {"name": "shop"}}),
        },
        "spec": spec,
    }
