"""The RBAC model the scenario test relies on, checked against kube-apiserver's rules."""

from __future__ import annotations

import pytest

from tests.deploy.rbac import Grant, Request, allowed, grants_for, parse, rule_allows

NS = "opsboard"


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("GET", "/api/v1/pods", Request("list", "", "pods")),
        ("GET", "/api/v1/namespaces/a/pods/p", Request("get", "", "pods", "", "a", "p")),
        ("GET", "/apis/apps/v1/watch/namespaces/a/deployments",
         Request("watch", "apps", "deployments", "", "a")),
        ("POST", "/api/v1/namespaces/a/events", Request("create", "", "events", "", "a")),
        ("PATCH", "/apis/cache.example.com/v1alpha1/namespaces/a/memcacheds/m/status",
         Request("patch", "cache.example.com", "memcacheds", "status", "a", "m")),
        ("PUT", "/apis/coordination.k8s.io/v1/namespaces/o/leases/l",
         Request("update", "coordination.k8s.io", "leases", "", "o", "l")),
        ("DELETE", "/api/v1/namespaces/a/pods", Request("deletecollection", "", "pods", "", "a")),
        ("GET", "/api/v1/namespaces/a", Request("get", "", "namespaces", "", "", "a")),
    ],
)  # fmt: skip
def test_parse_derives_the_attributes_the_authorizer_sees(
    method: str, path: str, expected: Request
) -> None:
    assert parse(method, path) == expected


def test_a_watch_query_on_a_collection_is_a_watch() -> None:
    assert parse("GET", "/api/v1/pods", watch=True) == Request("watch", "", "pods")


@pytest.mark.parametrize("path", ["/version", "/apis", "/api/v1", "/apis/apps/v1", "/openapi/v3"])
def test_discovery_paths_are_not_resource_requests(path: str) -> None:
    assert parse("GET", path) is None


RULE = {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "patch"]}


def test_a_rule_allows_its_verbs_on_its_resources_only() -> None:
    assert rule_allows(RULE, Request("patch", "apps", "deployments", name="d"))
    assert not rule_allows(RULE, Request("delete", "apps", "deployments", name="d"))
    assert not rule_allows(RULE, Request("get", "", "deployments", name="d"))  # group
    assert not rule_allows(RULE, Request("get", "apps", "replicasets", name="d"))


def test_a_resource_rule_does_not_reach_its_subresources() -> None:
    assert not rule_allows(RULE, Request("patch", "apps", "deployments", "status", name="d"))
    with_status = {**RULE, "resources": ["deployments/status"]}
    assert rule_allows(with_status, Request("patch", "apps", "deployments", "status", name="d"))
    any_scale = {**RULE, "resources": ["*/scale"]}
    assert rule_allows(any_scale, Request("get", "apps", "deployments", "scale", name="d"))
    assert not rule_allows(any_scale, Request("get", "apps", "deployments", "status", name="d"))


def test_stars_match_everything_in_their_field() -> None:
    star = {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}
    assert rule_allows(star, Request("delete", "x.io", "things", "status", "n", "t"))


def test_resource_names_restrict_the_rule_to_those_objects() -> None:
    named = {**RULE, "resourceNames": ["mine"]}
    assert rule_allows(named, Request("get", "apps", "deployments", name="mine"))
    assert not rule_allows(named, Request("get", "apps", "deployments", name="yours"))
    assert not rule_allows(named, Request("list", "apps", "deployments"))


def _manifests() -> list[dict]:
    lease_rule = {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get"]}
    return [
        {"kind": "ClusterRole", "metadata": {"name": "c"}, "rules": [RULE]},
        {"kind": "Role", "metadata": {"name": "r", "namespace": NS}, "rules": [lease_rule]},
        {"kind": "ClusterRoleBinding", "metadata": {"name": "c"},
         "roleRef": {"kind": "ClusterRole", "name": "c"},
         "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": NS}]},
        {"kind": "RoleBinding", "metadata": {"name": "r", "namespace": NS},
         "roleRef": {"kind": "Role", "name": "r"},
         "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": NS}]},
    ]  # fmt: skip


def test_a_cluster_role_binding_grants_in_every_namespace() -> None:
    grants = grants_for(_manifests(), account="sa", namespace=NS)
    assert allowed(grants, Request("get", "apps", "deployments", namespace="anywhere", name="d"))


def test_a_role_binding_grants_only_in_its_namespace() -> None:
    grants = grants_for(_manifests(), account="sa", namespace=NS)
    lease = Request("get", "coordination.k8s.io", "leases", namespace=NS, name="l")
    assert allowed(grants, lease)
    assert not allowed(grants, Request("get", "coordination.k8s.io", "leases", "", "other", "l"))


def test_other_identities_get_nothing() -> None:
    request = Request("get", "apps", "deployments", namespace=NS, name="d")
    assert not allowed(grants_for(_manifests(), account="other", namespace=NS), request)
    assert not allowed(grants_for(_manifests(), account="sa", namespace="elsewhere"), request)


def test_a_binding_to_a_missing_role_grants_nothing() -> None:
    docs = [d for d in _manifests() if d["kind"] != "ClusterRole"]
    grants = grants_for(docs, account="sa", namespace=NS)
    assert not allowed(grants, Request("get", "apps", "deployments", namespace=NS, name="d"))


def test_no_grant_means_no_access() -> None:
    assert not allowed([Grant((), None)], Request("get", "", "pods", namespace=NS, name="p"))
