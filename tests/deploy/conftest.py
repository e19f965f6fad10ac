from __future__ import annotations

import pytest

from tests.deploy.kustomize import Manifest, copy_with_secrets, documents, kustomize


@pytest.fixture(scope="session")
def built_yaml(tmp_path_factory: pytest.TempPathFactory) -> str:
    """`kubectl kustomize k8s/deploy`, once per session, with throwaway secrets."""
    result = kustomize(copy_with_secrets(tmp_path_factory.mktemp("k8s")))
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="session")
def built(built_yaml: str) -> list[Manifest]:
    return documents(built_yaml)
