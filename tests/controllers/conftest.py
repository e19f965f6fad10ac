"""Fixtures for the operator tests that need an API server (kubesim, or a real cluster)."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.kube import ApiKube, load_api_client
from tests.controllers.cluster import install_crds


@pytest.fixture(scope="session")
def operator_crds(kubesim_server: Any) -> None:
    """The Memcached and WebServer CRDs, installed once per session."""
    api_client = load_api_client(kubeconfig=str(kubesim_server.kubeconfig_path))
    try:
        install_crds(ApiKube(api_client))
    finally:
        api_client.close()


@pytest.fixture
def kube(kube_api_client: Any, operator_crds: None) -> ApiKube:
    return ApiKube(kube_api_client)
