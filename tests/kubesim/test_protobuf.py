"""`kubectl create <generator>` sends protobuf; kubesim decodes the simple kinds."""

from __future__ import annotations

import json

from tests.kubesim.conftest import Kubectl


def test_kubectl_create_namespace_configmap_secret_serviceaccount(
    kubectl: Kubectl, namespace: str
) -> None:
    kubectl("create", "configmap", "c", "--from-literal=a=b", namespace=namespace)
    kubectl("create", "secret", "generic", "s", "--from-literal=p=q", namespace=namespace)
    kubectl("create", "serviceaccount", "robot", namespace=namespace)
    cm = json.loads(kubectl("get", "cm", "c", "-o", "json", namespace=namespace).stdout)
    assert cm["data"] == {"a": "b"}
    secret = json.loads(kubectl("get", "secret", "s", "-o", "json", namespace=namespace).stdout)
    assert secret["data"] == {"p": "cQ=="} and secret["type"] == "Opaque"
    assert kubectl("get", "sa", "robot", "-o", "name", namespace=namespace).stdout.strip() == (
        "serviceaccount/robot"
    )


def test_kubectl_create_namespace(kubectl: Kubectl) -> None:
    out = kubectl("create", "namespace", "made-by-kubectl").stdout
    try:
        assert out.strip() == "namespace/made-by-kubectl created"
        labels = kubectl("get", "ns", "made-by-kubectl", "-o", "jsonpath={.metadata.labels}").stdout
        assert json.loads(labels) == {"kubernetes.io/metadata.name": "made-by-kubectl"}
    finally:
        kubectl("delete", "namespace", "made-by-kubectl", "--wait=false")
