from __future__ import annotations

import pytest

from controllers.objects import (
    controller_ref,
    describe_patch,
    describe_status,
    is_valid_image,
    owned_diff,
    owned_labels,
    ownership_problem,
    selector_string,
    set_condition,
)
from tests.controllers.builders import memcached


def test_controller_ref_names_the_owner_as_its_controller() -> None:
    ref = controller_ref(memcached("a"))
    assert ref == {
        "apiVersion": "cache.example.com/v1alpha1",
        "kind": "Memcached",
        "name": "a",
        "uid": "uid-a",
        "controller": True,
        "blockOwnerDeletion": True,
    }


def test_owned_labels_differ_between_two_instances_of_one_app() -> None:
    assert owned_labels("memcached", "a") != owned_labels("memcached", "b")
    assert owned_labels("memcached", "a")["app.kubernetes.io/managed-by"] == "opsboard"


def test_selector_string_is_sorted_and_comma_separated() -> None:
    assert selector_string({"b": "2", "a": "1"}) == "a=1,b=2"


@pytest.mark.parametrize(
    "image",
    [
        "nginx",
        "nginx:1.23.1",
        "memcached:1.4.36-alpine",
        "library/nginx:latest",
        "registry.example.com:5000/team/app:v1",
        "localhost:5000/app",
        "ghcr.io/org/app@sha256:" + "a" * 64,
        "memcached:does-not-exist",
    ],
)
def test_is_valid_image_accepts_image_references(image: str) -> None:
    assert is_valid_image(image)


@pytest.mark.parametrize(
    "image", ["UPPER CASE:bad", "", "Nginx", "nginx:", "nginx::1", "a b", ":tag", "nginx:-x"]
)
def test_is_valid_image_rejects_malformed_references(image: str) -> None:
    assert not is_valid_image(image)


def test_set_condition_adds_a_missing_condition_with_the_current_time() -> None:
    conditions = set_condition(
        [], type_="Available", status=True, reason="R", message="m", observed_generation=3, now="T1"
    )
    assert conditions == [
        {
            "type": "Available",
            "status": "True",
            "reason": "R",
            "message": "m",
            "observedGeneration": 3,
            "lastTransitionTime": "T1",
        }
    ]


def test_set_condition_keeps_the_transition_time_when_status_is_unchanged() -> None:
    first = set_condition(
        [],
        type_="Available",
        status=False,
        reason="A",
        message="1/3",
        observed_generation=1,
        now="T1",
    )
    second = set_condition(
        first,
        type_="Available",
        status=False,
        reason="B",
        message="2/3",
        observed_generation=2,
        now="T2",
    )
    assert second[0]["lastTransitionTime"] == "T1"
    assert (second[0]["reason"], second[0]["message"], second[0]["observedGeneration"]) == (
        "B",
        "2/3",
        2,
    )


def test_set_condition_moves_the_transition_time_when_status_flips_and_keeps_others() -> None:
    other = {"type": "Degraded", "status": "False", "lastTransitionTime": "T0"}
    first = set_condition(
        [other],
        type_="Available",
        status=False,
        reason="A",
        message="",
        observed_generation=1,
        now="T1",
    )
    flipped = set_condition(
        first,
        type_="Available",
        status=True,
        reason="A",
        message="",
        observed_generation=1,
        now="T2",
    )
    assert [c["type"] for c in flipped] == ["Degraded", "Available"]
    assert flipped[1]["lastTransitionTime"] == "T2"
    assert flipped[0] is other


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


def test_describe_patch_tells_a_scale_and_an_image_change() -> None:
    observed = {
        "spec": {
            "replicas": 3,
            "template": {"spec": {"containers": [{"name": "c", "image": "a", "x": 1}]}},
        }
    }
    patch = {
        "spec": {
            "replicas": 5,
            "template": {"spec": {"containers": [{"name": "c", "image": "b", "x": 1}]}},
        }
    }
    assert describe_patch("Deployment", "web", patch, observed) == [
        "Scaled Deployment web replicas 3→5",
        "Updated Deployment web image a→b",
    ]


def test_describe_patch_names_other_fields_it_corrected() -> None:
    patch = {"metadata": {"labels": {"a": "1"}}, "spec": {"type": "NodePort"}}
    assert describe_patch("Service", "s", patch, {}) == [
        "Updated Service s metadata.labels.a, spec.type"
    ]


def test_describe_status_counts_nodes_and_names_flipped_conditions() -> None:
    old = {
        "nodes": ["a"],
        "readyReplicas": 1,
        "conditions": [{"type": "Available", "status": "False", "reason": "PodsNotReady"}],
    }
    new = {
        "nodes": ["a", "b"],
        "readyReplicas": 2,
        "conditions": [
            {"type": "Available", "status": "True", "reason": "PodsReady"},
        ],
    }
    assert describe_status(old, new) == [
        "Updated status.nodes: 2 pods",
        "Updated status: readyReplicas 2, Available=True (PodsReady)",
    ]


def test_owned_diff_removes_extra_keys_from_a_map_that_must_match_exactly() -> None:
    desired = {"spec": {"selector": {"app": "web"}, "type": "NodePort"}}
    observed = {"spec": {"selector": {"app": "web", "tier": "x"}, "type": "NodePort"}}
    assert owned_diff(desired, observed) is None
    assert owned_diff(desired, observed, exact=frozenset({"spec.selector"})) == {
        "spec": {"selector": {"tier": None}}
    }


def test_ownership_problem_is_none_for_a_missing_an_own_or_an_orphan_child() -> None:
    cr = memcached("m")
    assert ownership_problem(cr, None, kind="Deployment") is None
    own = {"metadata": {"name": "m", "ownerReferences": [controller_ref(cr)]}}
    assert ownership_problem(cr, own, kind="Deployment") is None
    assert ownership_problem(cr, {"metadata": {"name": "m"}}, kind="Deployment") is None


def test_ownership_problem_names_the_other_controller_of_a_child() -> None:
    other = {"kind": "WebServer", "name": "m", "uid": "other", "controller": True}
    child = {"metadata": {"name": "m", "ownerReferences": [other]}}
    reason, message = ownership_problem(memcached("m"), child, kind="Deployment") or ("", "")
    assert reason == "ChildConflict"
    assert "Deployment m exists and is controlled by WebServer m" in message
