"""The operator's RBAC grants exactly what the registered controllers and the engine use."""

from __future__ import annotations

from controllers import bookstore, memcached, ptemplate, webserver
from controllers.base import EVENT, POD, PVC, Kind
from controllers.ptemplate.desired import SECRET
from opsboard.engine.watcher import MIRROR_ONLY
from tests.controllers.builders import bookstore as bookstore_cr
from tests.controllers.builders import memcached as memcached_cr
from tests.controllers.builders import webserver as webserver_cr
from tests.controllers.manifests import K8S, Grant, grants, load
from tests.controllers.ptemplate_helpers import ptemplate as ptemplate_cr

CONTROLLERS = [
    (memcached.CONTROLLER, memcached_cr()),
    (webserver.CONTROLLER, webserver_cr()),
    (bookstore.CONTROLLER, bookstore_cr()),
    (ptemplate.CONTROLLER, ptemplate_cr()),
]


def _on(kind: Kind, *verbs: str, subresource: str = "") -> set[Grant]:
    resource = f"{kind.plural}/{subresource}" if subresource else kind.plural
    return {(kind.group, resource, verb) for verb in verbs}


def _needed_by_the_code() -> set[Grant]:
    needed = _on(EVENT, "create", "patch")  # the engine's EventRecorder, aggregating by count
    for kind in MIRROR_ONLY:  # the watcher mirrors these for the UI
        needed |= _on(kind, "get", "list", "watch")
    for controller, sample in CONTROLLERS:
        for kind in (controller.primary, *controller.owns):
            needed |= _on(kind, "get", "list", "watch")  # the watcher's list + watch
        for child in controller.expected_children(sample):
            needed |= _on(child.kind, "create", "patch")  # ensure_child: create, or patch drift
        needed |= _on(controller.primary, "patch", subresource="status")  # begin_status
    needed |= _on(PVC, "patch")  # bookstore's expand_claims: a bigger dbSize grows the claims
    needed |= _on(POD, "delete")  # bookstore's replace_stuck_pods: the forced rollback
    needed |= _on(SECRET, "get")  # ptemplate's pull_secret_problem: a live read, never a watch
    return needed


def test_operator_cluster_role_grants_exactly_what_the_code_uses() -> None:
    [role] = load(K8S / "rbac" / "role.yaml")
    assert role["kind"] == "ClusterRole"
    assert grants(role["rules"]) == _needed_by_the_code()


def test_operator_never_writes_the_spec_of_its_crs() -> None:
    [role] = load(K8S / "rbac" / "role.yaml")
    granted = grants(role["rules"])
    for controller, _ in CONTROLLERS:
        assert not _on(controller.primary, "create", "update", "patch", "delete") & granted


def test_leader_election_is_a_namespaced_role_on_leases_only() -> None:
    [role] = load(K8S / "rbac" / "leader_election_role.yaml")
    assert role["kind"] == "Role"
    assert grants(role["rules"]) == {
        ("coordination.k8s.io", "leases", verb) for verb in ("get", "create", "update")
    }


def test_bindings_give_the_roles_to_the_operator_service_account() -> None:
    [account] = load(K8S / "rbac" / "service_account.yaml")
    for name in ("role_binding.yaml", "leader_election_role_binding.yaml"):
        [binding] = load(K8S / "rbac" / name)
        assert binding["subjects"] == [
            {
                "kind": "ServiceAccount",
                "name": account["metadata"]["name"],
                "namespace": account["metadata"]["namespace"],
            }
        ]


def test_each_crd_has_admin_editor_and_viewer_roles_aggregated_into_the_builtin_ones() -> None:
    for controller, _ in CONTROLLERS:
        for role, label, verb in (
            ("admin", "aggregate-to-admin", "delete"),
            ("editor", "aggregate-to-edit", "patch"),
            ("viewer", "aggregate-to-view", "watch"),
        ):
            [doc] = load(K8S / "rbac" / f"{controller.name}_{role}_role.yaml")
            assert doc["metadata"]["labels"][f"rbac.authorization.k8s.io/{label}"] == "true"
            granted = grants(doc["rules"])
            group, plural = controller.primary.group, controller.primary.plural
            assert (group, plural, verb) in granted or (group, plural, "*") in granted
    [viewer] = load(K8S / "rbac" / "memcached_viewer_role.yaml")
    assert {verb for _, _, verb in grants(viewer["rules"])} == {"get", "list", "watch"}
