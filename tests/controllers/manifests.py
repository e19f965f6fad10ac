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


def crd(plural: str) -> dict[str, Any]:
    return next(
        doc for path in CRD_FILES for doc in load(path) if doc["spec"]["names"]["plural"] == plural
    )
