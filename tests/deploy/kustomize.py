"""Builds k8s/deploy the way `kubectl apply -k` does, with throwaway secrets."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "k8s"
DEPLOY = K8S / "deploy"
KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"

Manifest = dict[str, Any]


def env_file_names(path: Path) -> list[str]:
    """The variable names a KEY=value file assigns, commented-out ones included."""
    names = []
    for line in path.read_text().splitlines():
        text = line.strip().removeprefix("#").strip()
        name, sep, _ = text.partition("=")
        if sep and name.isidentifier() and name.isupper():
            names.append(name)
    return names


def copy_with_secrets(dest: Path) -> Path:
    """A copy of k8s/ whose deploy/secrets.env fills every key of secrets.env.example."""
    shutil.copytree(K8S, dest / "k8s", ignore=shutil.ignore_patterns("secrets.env"))
    names = env_file_names(DEPLOY / "secrets.env.example")
    (dest / "k8s" / "deploy" / "secrets.env").write_text(
        "".join(f"{name}=test-{name.lower().replace('_', '-')}\n" for name in names)
    )
    return dest / "k8s" / "deploy"


def kustomize(directory: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBECTL, "kustomize", str(directory)], capture_output=True, text=True, timeout=60
    )


def documents(text: str) -> list[Manifest]:
    return [doc for doc in yaml.safe_load_all(text) if doc]
