"""Authentication as a cluster does it: the admin's token, ServiceAccount tokens from the
TokenRequest API (`kubectl create token`), 401 for a token that proves nothing, and client
certificates the cluster's CA signed (kind's and kubeadm's kubeconfigs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubernetes import client

from kubesim.tls import Authority
from tests.fixtures.kubesim import KubesimHandle
from tests.kubesim.conftest import Kubectl
from tests.kubesim.identities import client_with_token, service_account_token, status_of
from tests.kubesim.support import raw


def _whoami(api: client.ApiClient) -> dict[str, object]:
    review = client.AuthenticationV1Api(api).create_self_subject_review(
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    )
    info = review.status.user_info
    return {"username": info.username, "groups": info.groups}


def test_a_service_account_token_authenticates_as_the_service_account(
    kube_api_client: client.ApiClient, namespace: str
) -> None:
    token = service_account_token(kube_api_client, namespace, "robot")
    with client_with_token(kube_api_client, token) as robot:
        assert _whoami(robot) == {
            "username": f"system:serviceaccount:{namespace}:robot",
            "groups": [
                "system:serviceaccounts",
                f"system:serviceaccounts:{namespace}",
                "system:authenticated",
            ],
        }


def test_a_bad_token_is_401_unauthorized(kube_api_client: client.ApiClient) -> None:
    with client_with_token(kube_api_client, "not-a-token") as stranger:
        resp = raw(stranger, "GET", "/api/v1/namespaces/default/pods")
    assert resp.status == 401
    assert resp.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }


def test_no_credentials_is_system_anonymous(kube_api_client: client.ApiClient) -> None:
    with client_with_token(kube_api_client, None) as anonymous:
        version = raw(anonymous, "GET", "/version")
        pods = raw(anonymous, "GET", "/api/v1/pods")
    assert version.status == 200 and version.json()["major"] == "1"
    assert pods.status == 403
    assert pods.json()["message"] == (
        'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" '
        "at the cluster scope"
    )


def test_a_token_dies_with_its_service_account(
    kube_api_client: client.ApiClient, namespace: str
) -> None:
    token = service_account_token(kube_api_client, namespace, "shortlived")
    client.CoreV1Api(kube_api_client).delete_namespaced_service_account("shortlived", namespace)
    with client_with_token(kube_api_client, token) as ghost:
        for _ in range(100):  # a real server notices through its informer, not at once
            status = raw(ghost, "GET", "/version").status
            if status == 401:
                break
    assert status == 401


def test_a_token_request_shorter_than_ten_minutes_is_422(
    kube_api_client: client.ApiClient, namespace: str
) -> None:
    service_account_token(kube_api_client, namespace, "robot")
    with pytest.raises(client.ApiException) as caught:
        client.CoreV1Api(kube_api_client).create_namespaced_service_account_token(
            "robot", namespace, {"spec": {"expirationSeconds": 60}}
        )
    assert caught.value.status == 422
    assert status_of(caught.value)["message"] == (
        'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: '
        "Invalid value: 60: may not specify a duration less than 10 minutes"
    )


def test_kubectl_create_token_gives_a_working_token(
    kubectl: Kubectl, kube_api_client: client.ApiClient, namespace: str
) -> None:
    kubectl("create", "serviceaccount", "cli", namespace=namespace)
    token = kubectl("create", "token", "cli", "--duration=15m", namespace=namespace).stdout.strip()
    with client_with_token(kube_api_client, token) as cli:
        assert _whoami(cli)["username"] == f"system:serviceaccount:{namespace}:cli"
    whoami = kubectl("auth", "whoami", f"--token={token}", namespace=namespace).stdout
    assert f"system:serviceaccount:{namespace}:cli" in whoami


def _certificate_flags(authority: Authority, directory: Path, user: str, *groups: str) -> list[str]:
    certificate, key = authority.client_pair(user, groups)
    (directory / "user.crt").write_bytes(certificate)
    (directory / "user.key").write_bytes(key)
    return [
        f"--client-certificate={directory / 'user.crt'}",
        f"--client-key={directory / 'user.key'}",
    ]


@pytest.mark.kubesim_only  # signed with kubesim's CA key
def test_a_client_certificate_authenticates_as_its_common_name_in_its_organizations(
    kubectl: Kubectl, kubesim_server: KubesimHandle, tmp_path: Path
) -> None:
    authority = kubesim_server.sim.authority  # type: ignore[union-attr]
    flags = _certificate_flags(authority, tmp_path, "alice", "devs", "ops")
    # kubectl sends the kubeconfig's token too: the certificate comes first, as in
    # kube-apiserver's union of authenticators.
    whoami = json.loads(kubectl("auth", "whoami", "-o", "json", *flags).stdout)
    assert whoami["status"]["userInfo"] == {
        "username": "alice",
        "groups": ["devs", "ops", "system:authenticated"],
    }
    denied = kubectl("get", "pods", "-n", "default", *flags, check=False)
    assert denied.returncode != 0
    assert 'User "alice" cannot list resource "pods"' in denied.stderr


def test_a_client_certificate_another_ca_signed_never_authenticates_its_subject(
    kubectl: Kubectl, tmp_path: Path
) -> None:
    flags = _certificate_flags(Authority(None), tmp_path, "mallory", "system:masters")
    whoami = kubectl("auth", "whoami", "-o", "json", *flags, check=False)
    # kube-apiserver asks for a certificate without checking it in the handshake: its x509
    # authenticator fails and the kubeconfig's token beside it authenticates. kubesim's
    # TLS (Python's ssl) can only check it there: the handshake fails. In TLS 1.3 the
    # server judges the certificate after the client's last handshake message, so kubectl
    # may already be writing its request when the server's alert and close arrive: it then
    # says "broken pipe" or "connection reset" instead of naming the certificate.
    if whoami.returncode == 0:
        assert json.loads(whoami.stdout)["status"]["userInfo"]["username"] != "mallory"
    else:
        said = whoami.stderr.lower()
        assert any(s in said for s in ("certificate", "broken pipe", "connection reset")), said
        assert "mallory" not in whoami.stdout
