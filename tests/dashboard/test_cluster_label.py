"""Every page names the cluster it manages, and the API server's URL on hover: the
kubeconfig context's name, the one OPSBOARD_KUBE_CONTEXT picks, or OPSBOARD_CLUSTER_NAME."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.test import Client

from opsboard.dashboard import cluster_label

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_label() -> None:
    cluster_label._known.clear()


def _header(client: Client) -> tuple[str, str]:
    html = client.get("/").content.decode()
    found = re.search(
        r'<span class="cluster" title="([^"]*)">cluster <strong>([^<]*)</strong>', html
    )
    assert found, html[:2000]
    return found[2], found[1]


def _kubeconfig(path: Path, current: str, *others: str) -> Path:
    cluster = {"name": "c", "cluster": {"server": "https://127.0.0.1:6443"}}
    contexts = [{"name": n, "context": {"cluster": "c", "user": "u"}} for n in (current, *others)]
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": current, "clusters": [cluster],
        "users": [{"name": "u", "user": {"token": "t"}}], "contexts": contexts,
    }))  # fmt: skip
    return path


def test_the_header_names_the_kubeconfig_s_current_context_and_its_server(
    viewer_client: Client, settings: Any, tmp_path: Path
) -> None:
    settings.KUBECONFIG = str(_kubeconfig(tmp_path / "kubeconfig", "kind-dev", "prod"))
    assert _header(viewer_client) == ("kind-dev", "https://127.0.0.1:6443")


def test_the_context_opsboard_is_told_to_use_is_the_one_named(
    viewer_client: Client, settings: Any, tmp_path: Path
) -> None:
    settings.KUBECONFIG = str(_kubeconfig(tmp_path / "kubeconfig", "kind-dev", "prod"))
    settings.KUBE_CONTEXT = "prod"
    assert _header(viewer_client) == ("prod", "https://127.0.0.1:6443")


def test_a_name_given_in_the_settings_wins(
    viewer_client: Client, settings: Any, tmp_path: Path
) -> None:
    settings.KUBECONFIG = str(_kubeconfig(tmp_path / "kubeconfig", "kind-dev"))
    settings.CLUSTER_NAME = "prod-eu-1"
    assert _header(viewer_client) == ("prod-eu-1", "https://127.0.0.1:6443")


def test_no_kubeconfig_is_said_rather_than_a_name_made_up(
    viewer_client: Client, settings: Any, tmp_path: Path
) -> None:
    settings.KUBECONFIG = str(tmp_path / "missing")
    assert _header(viewer_client) == ("unknown", "the API server cannot be reached")
    # Written later (a cluster started after the web app): named from then on.
    _kubeconfig(tmp_path / "missing", "kind-dev")
    assert _header(viewer_client) == ("kind-dev", "https://127.0.0.1:6443")
