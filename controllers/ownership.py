"""What makes a plain dict a child of a CR: its controller reference and its labels."""

from __future__ import annotations

from collections.abc import Mapping

from controllers.base import Body

MANAGED_BY = "opsboard"
INSTANCE_LABEL = "app.kubernetes.io/instance"  # tells the CRs of one namespace apart


def controller_ref(owner: Body) -> Body:
    """The ownerReference that makes an object a controlled child of `owner`."""
    meta = owner["metadata"]
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def child_metadata(owner: Body, name: str, labels: Mapping[str, str]) -> Body:
    """The metadata of an object an operator keeps for `owner`: in its namespace, labelled
    and controlled by it."""
    return {
        "name": name,
        "namespace": owner["metadata"]["namespace"],
        "labels": dict(labels),
        "ownerReferences": [controller_ref(owner)],
    }


def owned_labels(app: str, instance: str) -> dict[str, str]:
    """Labels of the objects an operator keeps for one CR; unique per CR within a namespace."""
    return {
        "app.kubernetes.io/name": app,
        INSTANCE_LABEL: instance,
        "app.kubernetes.io/managed-by": MANAGED_BY,
    }


def selector_string(labels: Mapping[str, str]) -> str:
    """A label selector in its text form, as a scale subresource's labelSelectorPath wants."""
    return ",".join(f"{key}={value}" for key, value in sorted(labels.items()))
