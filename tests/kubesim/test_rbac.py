"""RBAC as the real server decides it: Roles and bindings, resourceNames, subresources,
aggregated ClusterRoles, non-resource URLs, and the 403 in kube-apiserver's words."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

from tests.kubesim.identities import (
    client_with_token,
    cluster_objects,
    service_account_token,
    status_of,
    unique,
)
from tests.kubesim.support import raw

RBAC = "rbac.authorization.k8s.io"


def _role(name: str, *rules: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": {"name": name}, "rules": rules}


def _binding(name: str, role_kind: str, role: str, namespace: str, sa: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": "RoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": RBAC, "kind": role_kind, "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": namespace}],
    }


def _status(call: Callable[[], Any]) -> int:
    try:
        call()
    except client.ApiException as exc:
        return int(exc.status)
    return 200


def _eventually(check: Callable[[], bool], what: str) -> None:
    """RBAC changes reach a real server's authorizer through an informer, a moment later."""
    deadline = time.monotonic() + 20
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def _forbidden(call: Callable[[], Any]) -> dict[str, Any]:
    with pytest.raises(client.ApiException) as caught:
        call()
    assert caught.value.status == 403, caught.value.body
    return status_of(caught.value)


def test_a_service_account_without_grants_gets_the_real_403(
    kube_api_client: client.ApiClient, namespace: str
) -> None:
    token = service_account_token(kube_api_client, namespace, "nobody")
    with client_with_token(kube_api_client, token) as nobody:
        apps = client.AppsV1Api(nobody)
        listed = _forbidden(lambda: apps.list_namespaced_deployment(namespace))
        got = _forbidden(lambda: apps.read_namespaced_deployment("web", namespace))
        nodes = _forbidden(lambda: client.CoreV1Api(nobody).list_node())
    who = f"system:serviceaccount:{namespace}:nobody"
    assert listed == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'deployments.apps is forbidden: User "{who}" cannot list resource '
        f'"deployments" in API group "apps" in the namespace "{namespace}"',
        "reason": "Forbidden",
        "details": {"group": "apps", "kind": "deployments"},
        "code": 403,
    }
    assert got["message"] == (
        f'deployments.apps "web" is forbidden: User "{who}" cannot get resource "deployments" '
        f'in API group "apps" in the namespace "{namespace}"'
    )
    assert got["details"] == {"name": "web", "group": "apps", "kind": "deployments"}
    assert nodes["message"] == (
        f'nodes is forbidden: User "{who}" cannot list resource "nodes" in API group "" at the '
        "cluster scope"
    )


def test_a_role_grants_its_verbs_and_resource_names_only(
    kube_api_client: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(kube_api_client)
    for name in ("mine", "theirs"):
        core.create_namespaced_config_map(namespace, {"metadata": {"name": name}})
    rbac = client.RbacAuthorizationV1Api(kube_api_client)
    rbac.create_namespaced_role(
        namespace,
        _role(
            "reader",
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]},
            {
                "apiGroups": [""],
                "resources": ["secrets"],
                "verbs": ["get"],
                "resourceNames": ["s1"],
            },
        ),
    )
    rbac.create_namespaced_role_binding(
        namespace, _binding("reader", "Role", "reader", namespace, "reader")
    )
    token = service_account_token(kube_api_client, namespace, "reader")
    with client_with_token(kube_api_client, token) as reader:
        mine = client.CoreV1Api(reader)
        _eventually(
            lambda: _status(lambda: mine.read_namespaced_config_map("mine", namespace)) == 200,
            "the Role to apply",
        )
        assert _status(lambda: mine.read_namespaced_config_map("theirs", namespace)) == 200
        denied = _forbidden(lambda: mine.list_namespaced_config_map(namespace))
        assert 'cannot list resource "configmaps"' in denied["message"]
        assert _status(lambda: mine.read_namespaced_secret("s1", namespace)) == 404  # allowed
        other = _forbidden(lambda: mine.read_namespaced_secret("s2", namespace))
        assert other["message"].startswith('secrets "s2" is forbidden: ')


def test_a_subresource_grant_is_not_a_grant_on_the_resource(
    kube_api_client: client.ApiClient, namespace: str
) -> None:
    client.AppsV1Api(kube_api_client).create_namespaced_deployment(
        namespace,
        {
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.23.1"}]},
                },
            },
        },
    )
    rbac = client.RbacAuthorizationV1Api(kube_api_client)
    rbac.create_namespaced_role(
        namespace,
        _role(
            "scaler", {"apiGroups": ["apps"], "resources": ["deployments/scale"], "verbs": ["get"]}
        ),
    )
    rbac.create_namespaced_role_binding(
        namespace, _binding("scaler", "Role", "scaler", namespace, "scaler")
    )
    token = service_account_token(kube_api_client, namespace, "scaler")
    with client_with_token(kube_api_client, token) as scaler:
        apps = client.AppsV1Api(scaler)
        _eventually(
            lambda: _status(lambda: apps.read_namespaced_deployment_scale("web", namespace)) == 200,
            "the scale grant",
        )
        denied = _forbidden(lambda: apps.read_namespaced_deployment("web", namespace))
        assert 'cannot get resource "deployments" in API group "apps"' in denied["message"]
        patch = _forbidden(
            lambda: apps.patch_namespaced_deployment_scale(
                "web", namespace, {"spec": {"replicas": 1}}
            )
        )
        assert 'cannot patch resource "deployments/scale"' in patch["message"]


def test_an_aggregated_cluster_role_holds_the_rules_its_selector_picks(
    kube_api_client: client.ApiClient, namespace: str
) -> None:
    rbac = client.RbacAuthorizationV1Api(kube_api_client)
    label = unique("example.com/aggregate-to")
    key = label.replace("example.com/", "kubesim.test/")
    aggregate, part = unique("h14-aggregate"), unique("h14-part")
    with cluster_objects(kube_api_client) as made:
        rbac.create_cluster_role(
            {
                "metadata": {"name": aggregate},
                "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {key: "true"}}]},
            }
        )
        made.append(("ClusterRole", aggregate))
        rbac.create_namespaced_role_binding(
            namespace, _binding("agg", "ClusterRole", aggregate, namespace, "agg")
        )
        token = service_account_token(kube_api_client, namespace, "agg")
        with client_with_token(kube_api_client, token) as agg:
            core = client.CoreV1Api(agg)
            assert _status(lambda: core.list_namespaced_service(namespace)) == 403
            rbac.create_cluster_role(
                {
                    "metadata": {"name": part, "labels": {key: "true"}},
                    "rules": [{"apiGroups": [""], "resources": ["services"], "verbs": ["list"]}],
                }
            )
            made.append(("ClusterRole", part))
            _eventually(
                lambda: _status(lambda: core.list_namespaced_service(namespace)) == 200,
                "the aggregated rule to apply",
            )
        _eventually(
            lambda: bool(rbac.read_cluster_role(aggregate).rules),
            "the aggregation controller to write the rules",
        )
        rules = rbac.read_cluster_role(aggregate).rules
        assert [(r.resources, r.verbs) for r in rules] == [(["services"], ["list"])]


def test_a_binding_to_a_missing_role_says_so_in_the_403(
    kube_api_client: client.ApiClient, namespace: str
) -> None:
    client.RbacAuthorizationV1Api(kube_api_client).create_namespaced_role_binding(
        namespace, _binding("dangling", "Role", "not-there", namespace, "dangling")
    )
    token = service_account_token(kube_api_client, namespace, "dangling")
    with client_with_token(kube_api_client, token) as dangling:
        core = client.CoreV1Api(dangling)

        def explained() -> bool:
            try:
                core.list_namespaced_pod(namespace)
            except client.ApiException as exc:
                return "RBAC:" in status_of(exc)["message"]
            raise AssertionError("listing pods was allowed")

        _eventually(explained, "the binding to be seen")
        message = status_of(_raises(lambda: core.list_namespaced_pod(namespace)))["message"]
    assert message.endswith(
        f'in the namespace "{namespace}": RBAC: role.rbac.authorization.k8s.io "not-there" '
        "not found"
    )


def _raises(call: Callable[[], Any]) -> client.ApiException:
    with pytest.raises(client.ApiException) as caught:
        call()
    return caught.value


def test_non_resource_urls_follow_the_discovery_roles(
    kube_api_client: client.ApiClient, namespace: str
) -> None:
    token = service_account_token(kube_api_client, namespace, "plain")
    with client_with_token(kube_api_client, token) as plain:
        assert raw(plain, "GET", "/version").status == 200
        assert raw(plain, "GET", "/apis").status == 200
        assert raw(plain, "GET", "/healthz").status == 200
        metrics = raw(plain, "GET", "/metrics")
    assert metrics.status == 403
    assert metrics.json()["message"] == (
        f'forbidden: User "system:serviceaccount:{namespace}:plain" cannot get path "/metrics"'
    )
    assert metrics.json()["details"] == {}
