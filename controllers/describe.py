"""What a write changed, told in Kubernetes style for the reconcile log (pure)."""

from __future__ import annotations

from controllers.base import Body
from controllers.conditions import find_condition
from controllers.fields import deep_get
from controllers.wording import count


def describe_patch(kind: str, name: str, patch: Body, observed: Body) -> list[str]:
    """ "Scaled Deployment x replicas 3→5", "Updated Deployment x image a→b", then the rest."""
    lines = []
    paths = _leaf_paths(patch)
    if "spec.replicas" in paths:
        paths.remove("spec.replicas")
        old = deep_get(observed, "spec.replicas")
        lines.append(f"Scaled {kind} {name} replicas {old}→{patch['spec']['replicas']}")
    containers = "spec.template.spec.containers"
    if containers in paths:
        have = deep_get(observed, containers, [])
        want = deep_get(patch, containers, [])
        images = {c.get("name"): c.get("image") for c in have}
        for container in want:
            old = images.get(container.get("name"))
            if old is not None and old != container.get("image"):
                lines.append(f"Updated {kind} {name} image {old}→{container.get('image')}")
        if _without_images(want) == _without_images(have):
            paths.remove(containers)
    if paths:
        lines.append(f"Updated {kind} {name} {', '.join(paths)}")
    return lines


def describe_status(old: Body, new: Body) -> list[str]:
    """ "Updated status.nodes: 5 pods", then the other fields and conditions that changed."""
    lines = []
    if old.get("nodes") != new.get("nodes"):
        lines.append(f"Updated status.nodes: {count(len(new.get('nodes') or []), 'pod')}")
    changes = [
        f"{key} {readable(new[key])}"
        for key in new
        if key not in ("nodes", "conditions") and old.get(key) != new[key]
    ]
    for condition in new.get("conditions", []):
        before = find_condition(old.get("conditions"), condition["type"]) or {}
        if (before.get("status"), before.get("reason")) != (
            condition["status"],
            condition["reason"],
        ):
            changes.append(f"{condition['type']}={condition['status']} ({condition['reason']})")
    if changes:
        lines.append(f"Updated status: {', '.join(changes)}")
    return lines


def readable(value: object) -> str:
    """A status value as a person reads it, not as Python prints it: a list's items
    comma-separated in brackets, an entry by its name then its other fields:
    `[data-db-0 (requested 2Gi, state Bound), data-db-1 (…)]`."""
    if isinstance(value, list):
        return f"[{', '.join(readable(item) for item in value)}]"
    if isinstance(value, dict):
        fields = ", ".join(f"{k} {readable(v)}" for k, v in value.items() if k != "name")
        if "name" not in value:
            return f"({fields})"
        return f"{value['name']} ({fields})" if fields else str(value["name"])
    return str(value)


def _leaf_paths(patch: Body, prefix: str = "") -> list[str]:
    paths = []
    for key, value in patch.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            paths.extend(_leaf_paths(value, f"{path}."))
        else:
            paths.append(path)
    return paths


def _without_images(containers: list[Body]) -> list[Body]:
    return [{k: v for k, v in c.items() if k != "image"} for c in containers]
