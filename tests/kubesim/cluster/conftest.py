"""API shortcuts shared by the simulated-cluster tests (the server fixtures live in tests/fixtures/kubesim.py)."""

from __future__ import annotations

import pytest
from kubernetes import client


@pytest.fixture
def apps(kube_api_client: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(kube_api_client)


@pytest.fixture
def core(kube_api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(kube_api_client)
