from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from controllers.kube import load_api_client
from tests.deploy.kustomize import Manifest, copy_with_secrets, documents, kustomize

NAMESPACE = "opsboard"


@pytest.fixture(scope="session")
def built_yaml(tmp_path_factory: pytest.TempPathFactory) -> str:
    """`kubectl kustomize k8s/deploy`, once per session, with throwaway secrets."""
    result = kustomize(copy_with_secrets(tmp_path_factory.mktemp("k8s")))
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="session")
def built(built_yaml: str) -> list[Manifest]:
    return documents(built_yaml)


@pytest.fixture(scope="session")
def opsboard_namespace(kubesim_server: Any) -> Iterator[str]:
    """The install's namespace, for the whole session (deleting one takes a while on a real
    cluster); a namespace that existed before is left alone."""
    from kubernetes import client

    api = load_api_client(kubeconfig=str(kubesim_server.kubeconfig_path))
    core = client.CoreV1Api(api)
    try:
        core.create_namespace({"metadata": {"name": NAMESPACE}})
        created = True
    except client.ApiException as exc:
        if exc.status != 409:
            raise
        created = False
    yield NAMESPACE
    if created:
        core.delete_namespace(NAMESPACE)
    api.close()
