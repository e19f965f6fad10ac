"""The operators' manifests as data: CRDs, RBAC and samples from k8s/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

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


def crd(plural: str) -> dict[str, Any]:
    return next(
        doc for path in CRD_FILES for doc in load(path) if doc["spec"]["names"]["plural"] == plural
    )
