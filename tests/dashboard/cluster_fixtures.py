"""Cluster fixtures for the patch tests: the operators' CRDs installed in the suite's
kubesim (or the real cluster of OPSBOARD_TEST_KUBECONFIG), and the web app pointed at it."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.kube import ApiKube, load_api_client
from tests.controllers.cluster import install_crds


@pytest.fixture(scope="session")
def dashboard_crds(kubesim_server: Any) -> None:
    api_client = load_api_client(kubeconfig=str(kubesim_server.kubeconfig_path))
    try:
        install_crds(ApiKube(api_client))
    finally:
        api_client.close()


@pytest.fixture
def cluster_kube(kube_api_client: Any, dashboard_crds: None, kubesim_server: Any,
                 settings: Any) -> ApiKube:  # fmt: skip
    """An ApiKube for the test's own reads and writes; the web app uses the same cluster."""
    settings.KUBECONFIG = str(kubesim_server.kubeconfig_path)
    return ApiKube(kube_api_client)
