"""The ServiceAccount admission plugin's token volume, which every pod of a cluster has
unless the pod or its ServiceAccount opts out."""

from __future__ import annotations

import re
from typing import Any

from kubernetes import client

from tests.kubesim.support import raw

MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "c", "image": "registry.k8s.io/pause:3.9"}
    return {"metadata": {"name": name}, "spec": {"containers": [container], **spec}}


def _create(api: client.ApiClient, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    resp = raw(api, "POST", f"/api/v1/namespaces/{namespace}/pods", body=body)
    assert resp.status == 201, resp.data
    return resp.json()["spec"]  # type: ignore[no-any-return]


def test_a_pod_gets_the_projected_token_volume(
    kube_api_client: client.ApiClient, namespace: str
) -> None:
    init = {"name": "i", "image": "registry.k8s.io/pause:3.9"}
    spec = _create(kube_api_client, namespace, _pod("p", initContainers=[init]))
    [volume] = spec["volumes"]
    assert re.fullmatch(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", volume["name"])
    assert volume["projected"] == {
        "defaultMode": 420,
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {
                "configMap": {
                    "name": "kube-root-ca.crt",
                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                }
            },
            {
                "downwardAPI": {
                    "items": [
                        {
                            "path": "namespace",
                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                        }
                    ]
                }
            },
        ],
    }
    mount = {"name": volume["name"], "readOnly": True, "mountPath": MOUNT}
    for c in [*spec["initContainers"], *spec["containers"]]:
        assert c["volumeMounts"] == [mount]


def test_the_pod_or_its_service_account_may_opt_out(
    kube_api_client: client.ApiClient, namespace: str
) -> None:
    assert "volumes" not in _create(
        kube_api_client, namespace, _pod("own", automountServiceAccountToken=False)
    )
    client.CoreV1Api(kube_api_client).create_namespaced_service_account(
        namespace, {"metadata": {"name": "quiet"}, "automountServiceAccountToken": False}
    )
    assert "volumes" not in _create(
        kube_api_client, namespace, _pod("by-account", serviceAccountName="quiet")
    )
    # the pod's own setting wins over its ServiceAccount's
    spec = _create(
        kube_api_client,
        namespace,
        _pod("insists", serviceAccountName="quiet", automountServiceAccountToken=True),
    )
    assert [m["mountPath"] for m in spec["containers"][0]["volumeMounts"]] == [MOUNT]
