"""What kube-controller-manager puts in every new namespace: the `default` ServiceAccount
(serviceaccount controller) and the `kube-root-ca.crt` ConfigMap (root CA publisher)."""

from __future__ import annotations

import base64
import contextlib
import hashlib
from typing import TYPE_CHECKING

from kubesim.errors import ApiError

if TYPE_CHECKING:
    from kubesim.store import Store


def _fake_ca() -> str:
    """A stable, PEM-shaped stand-in for a store served without its own CA."""
    body = base64.b64encode(hashlib.sha512(b"kubesim root ca").digest() * 6).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "-----BEGIN CERTIFICATE-----\n" + "\n".join(lines) + "\n-----END CERTIFICATE-----\n"


ROOT_CA = _fake_ca()


def populate(store: Store, namespace: str) -> None:
    objects = (
        ("serviceaccounts", {"metadata": {"name": "default"}}),
        (
            "configmaps",
            {
                "metadata": {
                    "name": "kube-root-ca.crt",
                    "annotations": {
                        "kubernetes.io/description": "Contains a CA bundle that can be used to verify the "
                        "kube-apiserver when using internal endpoints such as the internal service IP or "
                        "kubernetes.default.svc. No other usage is guaranteed across distributions of "
                        "Kubernetes clusters."
                    },
                },
                "data": {"ca.crt": store.root_ca or ROOT_CA},
            },
        ),
    )
    for resource, body in objects:
        with contextlib.suppress(ApiError):  # exists already, or the namespace is going
            store.create(resource, body, namespace=namespace)
