"""The YAML examples in docs/deployment.md parse, and the built-in kinds among them validate."""

from __future__ import annotations

import re

import kubernetes_validate
import pytest
import yaml

from tests.deploy.kustomize import ROOT

DOC = ROOT / "docs" / "deployment.md"
BLOCKS = re.findall(r"```yaml\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_doc_has_yaml_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: yaml.safe_load(b)["kind"])
def test_each_example_is_a_valid_object(block: str) -> None:
    doc = yaml.safe_load(block)
    assert doc["metadata"]["namespace"] == "opsboard"
    if doc["apiVersion"].startswith("monitoring.coreos.com/"):
        return  # the Prometheus Operator's CRDs are not in the Kubernetes schemas
    kubernetes_validate.validate(doc, kubernetes_validate.latest_version(), strict=True)
