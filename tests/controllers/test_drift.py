from __future__ import annotations

from controllers.drift import owned_diff


def test_owned_diff_is_none_when_observed_only_adds_fields_others_own() -> None:
    desired = {"spec": {"replicas": 3, "containers": [{"name": "c", "image": "a"}]}}
    observed = {
        "metadata": {"resourceVersion": "7", "annotations": {"x": "y"}},
        "spec": {
            "replicas": 3,
            "progressDeadlineSeconds": 600,
            "containers": [{"name": "c", "image": "a", "terminationMessagePath": "/dev/t"}],
        },
    }
    assert owned_diff(desired, observed) is None


def test_owned_diff_patches_only_the_drifted_scalar() -> None:
    desired = {"metadata": {"labels": {"a": "1"}}, "spec": {"replicas": 5, "paused": False}}
    observed = {
        "metadata": {"labels": {"a": "1", "b": "2"}},
        "spec": {"replicas": 3, "paused": False},
    }
    assert owned_diff(desired, observed) == {"spec": {"replicas": 5}}


def test_owned_diff_lays_a_changed_container_over_the_observed_list() -> None:
    desired = {"containers": [{"name": "c", "image": "new"}]}
    observed = {
        "containers": [
            {"name": "sidecar", "image": "proxy"},
            {"name": "c", "image": "old", "resources": {"limits": {"cpu": "1"}}},
        ]
    }
    assert owned_diff(desired, observed) == {
        "containers": [
            {"name": "sidecar", "image": "proxy"},
            {"name": "c", "image": "new", "resources": {"limits": {"cpu": "1"}}},
        ]
    }


def test_owned_diff_keeps_an_allocated_node_port_when_the_port_changes() -> None:
    desired = {"ports": [{"name": "http", "port": 8080, "targetPort": 8080}]}
    observed = {"ports": [{"name": "http", "port": 80, "targetPort": 80, "nodePort": 31234}]}
    assert owned_diff(desired, observed) == {
        "ports": [{"name": "http", "port": 8080, "targetPort": 8080, "nodePort": 31234}]
    }


def test_owned_diff_adds_a_missing_field_and_a_missing_list_item() -> None:
    desired = {"spec": {"selector": {"app": "x"}}, "refs": [{"uid": "1", "kind": "K"}]}
    observed = {"refs": [{"uid": "2", "kind": "Other"}]}
    assert owned_diff(desired, observed) == {
        "spec": {"selector": {"app": "x"}},
        "refs": [{"uid": "2", "kind": "Other"}, {"uid": "1", "kind": "K"}],
    }


def test_owned_diff_replaces_a_list_of_scalars_that_differs() -> None:
    assert owned_diff({"args": ["-m=64", "-v"]}, {"args": ["-m=64"]}) == {"args": ["-m=64", "-v"]}
    assert owned_diff({"args": ["-v"]}, {"args": ["-v"]}) is None


def test_owned_diff_removes_extra_keys_from_a_map_that_must_match_exactly() -> None:
    desired = {"spec": {"selector": {"app": "web"}, "type": "NodePort"}}
    observed = {"spec": {"selector": {"app": "web", "tier": "x"}, "type": "NodePort"}}
    assert owned_diff(desired, observed) is None
    assert owned_diff(desired, observed, exact=frozenset({"spec.selector"})) == {
        "spec": {"selector": {"tier": None}}
    }


def test_an_exact_map_in_a_list_item_loses_its_extra_keys_in_the_list_sent_whole() -> None:
    exact = frozenset({"containers[].resources", "containers[].resources.limits"})
    desired = {"containers": [{"name": "app", "resources": {"limits": {"memory": "1Gi"}}}]}
    observed = {
        "containers": [
            {
                "name": "app",
                "image": "x",
                "resources": {"limits": {"memory": "1Gi", "cpu": "1"}, "requests": {"cpu": "1"}},
            },
            {"name": "sidecar", "resources": {"limits": {"cpu": "1"}}},
        ]
    }
    assert owned_diff(desired, observed) is None  # not exact: the extra keys are others'
    assert owned_diff(desired, observed, exact=exact) == {
        "containers": [
            {"name": "app", "image": "x", "resources": {"limits": {"memory": "1Gi"}}},
            {"name": "sidecar", "resources": {"limits": {"cpu": "1"}}},
        ]
    }


def test_an_empty_map_agrees_with_an_absent_one() -> None:
    assert owned_diff({"spec": {"nodeSelector": {}}}, {"spec": {}}) is None
    assert (
        owned_diff({"spec": {"nodeSelector": {}}}, {"spec": {"nodeSelector": {"a": "1"}}}) is None
    )
    exact = frozenset({"spec.nodeSelector"})
    assert owned_diff(
        {"spec": {"nodeSelector": {}}}, {"spec": {"nodeSelector": {"a": "1"}}}, exact=exact
    ) == {"spec": {"nodeSelector": {"a": None}}}


def test_a_list_that_must_match_exactly_loses_the_items_not_desired() -> None:
    exact = frozenset({"secrets"})
    desired = {"secrets": [{"name": "new"}]}
    observed = {"secrets": [{"name": "old"}, {"name": "new"}]}
    assert owned_diff(desired, observed) is None  # not exact: the old one is someone's
    assert owned_diff(desired, observed, exact=exact) == {"secrets": [{"name": "new"}]}
    assert owned_diff(desired, {"secrets": [{"name": "old"}]}, exact=exact) == desired
    assert owned_diff(desired, desired, exact=exact) is None
