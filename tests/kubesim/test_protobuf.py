"""`kubectl create <generator>` sends protobuf; kubesim decodes the simple kinds."""

from __future__ import annotations

import json

import pytest

from kubesim.errors import ApiError
from kubesim.protobuf import MAGIC, decode
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


def _ld(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (wire type 2); payloads here are < 128 bytes."""
    return bytes([number << 3 | 2, len(payload)]) + payload


def test_a_number_where_a_message_belongs_is_a_400_not_a_crash() -> None:
    type_meta = _ld(1, b"v1") + _ld(2, b"Namespace")
    namespace = bytes([1 << 3 | 0, 7])  # metadata (a message) sent as the varint 7
    body = MAGIC + _ld(1, type_meta) + _ld(2, namespace)
    with pytest.raises(ApiError) as caught:
        decode(body, ["application/json"])
    assert caught.value.code == 400
    assert "unable to decode protobuf body" in caught.value.message


def test_a_well_formed_namespace_decodes() -> None:
    type_meta = _ld(1, b"v1") + _ld(2, b"Namespace")
    body = MAGIC + _ld(1, type_meta) + _ld(2, _ld(1, _ld(1, b"made-by-hand")))
    assert decode(body, ["application/json"]) == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "made-by-hand"},
    }
