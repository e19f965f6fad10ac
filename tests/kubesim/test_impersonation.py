"""Impersonation (`kubectl --as`, Impersonate-User/Group): honoured for whom may
`impersonate`, refused with the real 403 otherwise; access reviews answer for the user
acted as (`kubectl auth can-i`, `--list`)."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from tests.kubesim.conftest import Kubectl
from tests.kubesim.identities import (
    client_with_token,
    cluster_objects,
    service_account_token,
    unique,
)
from tests.kubesim.support import raw

RBAC = "rbac.authorization.k8s.io"


def _grant_pod_reading(api: client.ApiClient, namespace: str, sa: str) -> None:
    rbac = client.RbacAuthorizationV1Api(api)
    rbac.create_namespaced_role(
        namespace,
        {
            "metadata": {"name": "pod-reader"},
            "rules": [
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
                {
                    "apiGroups": ["apps"],
                    "resources": ["deployments"],
                    "verbs": ["get"],
                    "resourceNames": ["web"],
                },
            ],
        },
    )
    rbac.create_namespaced_role_binding(
        namespace,
        {
            "metadata": {"name": "pod-reader"},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "pod-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": namespace}],
        },
    )


def _wait_for(kubectl: Kubectl, *args: str, want: str, namespace: str) -> str:
    for _ in range(100):
        out = kubectl(*args, namespace=namespace, check=False)
        if out.stdout.strip() == want:
            return want
    raise AssertionError(f"kubectl {' '.join(args)} never said {want!r}: {out.stdout}{out.stderr}")


def test_kubectl_as_a_service_account_gets_its_403(kubectl: Kubectl, namespace: str) -> None:
    kubectl("create", "serviceaccount", "bot", namespace=namespace)
    who = f"system:serviceaccount:{namespace}:bot"
    out = kubectl("get", "deployments", f"--as={who}", namespace=namespace, check=False)
    assert out.returncode == 1
    assert out.stderr.strip() == (
        f'Error from server (Forbidden): deployments.apps is forbidden: User "{who}" cannot '
        f'list resource "deployments" in API group "apps" in the namespace "{namespace}"'
    )


def test_kubectl_auth_can_i_answers_for_the_impersonated_user(
    kubectl: Kubectl, kube_api_client: client.ApiClient, namespace: str
) -> None:
    kubectl("create", "serviceaccount", "bot", namespace=namespace)
    _grant_pod_reading(kube_api_client, namespace, "bot")
    who = f"--as=system:serviceaccount:{namespace}:bot"
    _wait_for(kubectl, "auth", "can-i", "list", "pods", who, want="yes", namespace=namespace)
    no = kubectl("auth", "can-i", "delete", "pods", who, namespace=namespace, check=False)
    assert (no.returncode, no.stdout.strip()) == (1, "no")
    named = kubectl("auth", "can-i", "get", "deployments/web", who, namespace=namespace)
    assert named.stdout.strip() == "yes"
    other = kubectl("auth", "can-i", "get", "deployments/db", who, namespace=namespace, check=False)
    assert other.stdout.strip() == "no"


def test_kubectl_auth_can_i_list_shows_exactly_the_grants(
    kubectl: Kubectl, kube_api_client: client.ApiClient, namespace: str
) -> None:
    kubectl("create", "serviceaccount", "bot", namespace=namespace)
    _grant_pod_reading(kube_api_client, namespace, "bot")
    who = f"--as=system:serviceaccount:{namespace}:bot"
    _wait_for(kubectl, "auth", "can-i", "list", "pods", who, want="yes", namespace=namespace)
    lines = kubectl("auth", "can-i", "--list", who, namespace=namespace).stdout.splitlines()
    rows = [line.split() for line in lines[1:]]
    resource_rows = [r for r in rows if not r[0].startswith("[")]
    assert resource_rows == [
        ["selfsubjectreviews.authentication.k8s.io", "[]", "[]", "[create]"],
        ["selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]"],
        ["selfsubjectrulesreviews.authorization.k8s.io", "[]", "[]", "[create]"],
        ["pods", "[]", "[]", "[get", "list", "watch]"],
        ["deployments.apps", "[]", "[web]", "[get]"],
    ]
    urls = {r[0] for r in rows if r[0].startswith("[")}
    assert {"[/api]", "[/apis/*]", "[/version]", "[/healthz]", "[/openapi/*]"} <= urls


def test_impersonating_without_the_grant_is_the_real_403(
    kube_api_client: client.ApiClient, namespace: str
) -> None:
    token = service_account_token(kube_api_client, namespace, "plain")
    with client_with_token(kube_api_client, token) as plain:
        user = raw(plain, "GET", "/version", headers={"Impersonate-User": "alice"})
        sa = raw(
            plain,
            "GET",
            "/version",
            headers={"Impersonate-User": f"system:serviceaccount:{namespace}:other"},
        )
    who = f"system:serviceaccount:{namespace}:plain"
    assert user.status == 403
    assert user.json()["message"] == (
        f'users "alice" is forbidden: User "{who}" cannot impersonate resource "users" in API '
        'group "" at the cluster scope'
    )
    assert user.json()["details"] == {"name": "alice", "kind": "users"}
    assert sa.json()["message"] == (
        f'serviceaccounts "other" is forbidden: User "{who}" cannot impersonate resource '
        f'"serviceaccounts" in API group "" in the namespace "{namespace}"'
    )


def test_a_granted_impersonation_acts_as_the_user_and_groups(
    kube_api_client: client.ApiClient, namespace: str
) -> None:
    role, alice, team = unique("h14-impersonator"), unique("alice"), unique("team")
    rbac = client.RbacAuthorizationV1Api(kube_api_client)
    token = service_account_token(kube_api_client, namespace, "front")
    with cluster_objects(kube_api_client) as made:
        rbac.create_cluster_role(
            {
                "metadata": {"name": role},
                "rules": [
                    {
                        "apiGroups": [""],
                        "resources": ["users"],
                        "verbs": ["impersonate"],
                        "resourceNames": [alice],
                    },
                    {
                        "apiGroups": [""],
                        "resources": ["groups"],
                        "verbs": ["impersonate"],
                        "resourceNames": [team],
                    },
                ],
            }
        )
        made.append(("ClusterRole", role))
        rbac.create_cluster_role_binding(
            {
                "metadata": {"name": role},
                "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role},
                "subjects": [{"kind": "ServiceAccount", "name": "front", "namespace": namespace}],
            }
        )
        made.append(("ClusterRoleBinding", role))
        review: dict[str, Any] = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "SelfSubjectReview",
        }
        path = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
        headers = {"Impersonate-User": alice, "Impersonate-Group": team}
        with client_with_token(kube_api_client, token) as front:
            for _ in range(100):
                answer = raw(front, "POST", path, body=review, headers=headers)
                if answer.status == 201:
                    break
            assert answer.status == 201, answer.data
            assert answer.json()["status"]["userInfo"] == {
                "username": alice,
                "groups": [team, "system:authenticated"],
            }
            bob = raw(front, "POST", path, body=review, headers={"Impersonate-User": "bob"})
            assert bob.status == 403
