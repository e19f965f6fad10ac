from __future__ import annotations

from controllers.describe import describe_patch, describe_status


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


def test_describe_status_tells_lists_and_entries_in_words_not_python_repr() -> None:
    claim = {"name": "data-db-0", "requested": "2Gi", "state": "Bound", "capacity": "2Gi"}
    new = {"nodes": ["a"], "claims": [claim, {"name": "data-db-1", "requested": "2Gi"}]}
    assert describe_status({}, new) == [
        "Updated status.nodes: 1 pod",
        "Updated status: claims [data-db-0 (requested 2Gi, state Bound, capacity 2Gi), "
        "data-db-1 (requested 2Gi)]",
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
