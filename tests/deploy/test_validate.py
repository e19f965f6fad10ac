"""Every object `kubectl apply -k k8s/deploy` sends validates against the Kubernetes schemas."""

from __future__ import annotations

import kubernetes_validate
import pytest

from tests.deploy.kustomize import Manifest

# The oldest Kubernetes we support, the one kubectl here speaks, and the newest schemas known.
VERSIONS = ["1.28.0", "1.32.0", kubernetes_validate.latest_version()]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_built_object_validates_strictly(built: list[Manifest], version: str) -> None:
    failures = []
    for doc in built:
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            failures.append(f"{doc['kind']}/{doc['metadata']['name']}: {exc.message}")
    assert not failures


def test_the_validator_rejects_a_misspelt_field(built: list[Manifest]) -> None:
    web = next(d for d in built if d["kind"] == "Deployment")
    broken = {**web, "spec": {**web["spec"], "replica": 2}}
    with pytest.raises(kubernetes_validate.ValidationError, match="replica"):
        kubernetes_validate.validate(broken, VERSIONS[-1], strict=True)
