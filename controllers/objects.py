"""Pure helpers shared by the operators: ownership, labels, conditions, drift, images.

Plain dicts in, plain dicts out: no client, no I/O, so every rule here has a fast test.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from controllers.base import Body, Manifest

MANAGED_BY = "opsboard"

# A Docker/OCI image reference (distribution's grammar): [registry[:port]/]path[:tag][@digest].
# Written for both Python's re and Go's RE2, so the CRDs can carry the same pattern.
_DOMAIN_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*(?::[0-9]+)?"
_PATH_PART = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*"
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
IMAGE_PATTERN = rf"^(?:{_DOMAIN}/)?{_PATH_PART}(?:/{_PATH_PART})*(?::{_TAG})?(?:@{_DIGEST})?$"
_IMAGE_RE = re.compile(IMAGE_PATTERN)

# Why a CR cannot be reconciled as asked: (condition reason, message for a person).
Problem = tuple[str, str]
INVALID_SPEC = "InvalidSpec"
CHILD_CONFLICT = "ChildConflict"

# Keys that identify an item of a list of objects, tried in order (as strategic merge does):
# ownerReferences by uid, containers/env/ports by name, conditions by type.
_LIST_KEYS = ("uid", "name", "type", "containerPort", "port")


def is_valid_image(image: str) -> bool:
    """Whether `image` is a well-formed image reference (not whether it exists)."""
    return len(image) <= 4096 and _IMAGE_RE.match(image) is not None


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


def owned_labels(app: str, instance: str) -> dict[str, str]:
    """Labels of the objects an operator keeps for one CR; unique per CR within a namespace."""
    return {
        "app.kubernetes.io/name": app,
        "app.kubernetes.io/instance": instance,
        "app.kubernetes.io/managed-by": MANAGED_BY,
    }


def selector_string(labels: Mapping[str, str]) -> str:
    """A label selector in its text form, as a scale subresource's labelSelectorPath wants."""
    return ",".join(f"{key}={value}" for key, value in sorted(labels.items()))


def find_condition(conditions: list[Body] | None, type_: str) -> Body | None:
    return next((c for c in conditions or [] if c.get("type") == type_), None)


Verdict = tuple[str, bool, tuple[str, str]]  # (condition type, true?, (reason, message))


def conditions_from(
    cr: Body, verdicts: Iterable[Verdict], *, observed_generation: int, now: str
) -> list[Body]:
    """The CR's conditions with each verdict set, in order (see set_condition)."""
    conditions: list[Body] = deep_get(cr, "status.conditions", [])
    for type_, truth, (reason, message) in verdicts:
        conditions = set_condition(
            conditions,
            type_=type_,
            status=truth,
            reason=reason,
            message=message,
            observed_generation=observed_generation,
            now=now,
        )
    return conditions


def set_condition(
    conditions: list[Body] | None,
    *,
    type_: str,
    status: bool,
    reason: str,
    message: str,
    observed_generation: int,
    now: str,
) -> list[Body]:
    """A copy of `conditions` with `type_` set; lastTransitionTime moves only when status does."""
    old = find_condition(conditions, type_)
    text = "True" if status else "False"
    changed = old is None or old.get("status") != text
    new = {
        "type": type_,
        "status": text,
        "reason": reason,
        "message": message,
        "observedGeneration": observed_generation,
        "lastTransitionTime": now if old is None or changed else old.get("lastTransitionTime", now),
    }
    if old is None:
        return [*(conditions or []), new]
    return [new if c.get("type") == type_ else c for c in conditions or []]


def owned_diff(
    desired: Manifest, observed: Body | None, *, exact: frozenset[str] = frozenset(), _at: str = ""
) -> Body | None:
    """The minimal merge patch that makes `observed` agree with `desired`, or None.

    Only the fields present in `desired` are compared, so fields that others own (defaults,
    annotations, an allocated nodePort, a sidecar) are kept. A list of objects that differs
    is sent whole, as the observed list with the desired items laid over it by their key.
    The maps at the dotted paths in `exact` (a Service's selector) must match key for key:
    an extra key there would change their meaning, so the patch removes it (null).
    """
    observed = observed or {}
    patch: Body = {}
    for key, want in desired.items():
        have, path = observed.get(key), f"{_at}{key}"
        if isinstance(want, dict) and isinstance(have, dict):
            sub = owned_diff(want, have, exact=exact, _at=f"{path}.")
            extra = {k: None for k in have if k not in want} if path in exact else {}
            if sub is not None or extra:
                patch[key] = {**extra, **(sub or {})}
        elif isinstance(want, list) and isinstance(have, list):
            if not _list_covers(want, have):
                patch[key] = _overlay_list(want, have)
        elif want != have:
            patch[key] = want
    return patch or None


def deep_get(body: Mapping[str, Any] | None, path: str, default: Any = None) -> Any:
    """`deep_get(obj, "spec.template.spec")`: a nested field, or `default` when absent."""
    value: Any = body
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return default
        value = value[part]
    return value


def _list_key(items: list[Any]) -> str | None:
    if not items or not all(isinstance(item, dict) for item in items):
        return None
    return next((k for k in _LIST_KEYS if all(k in item for item in items)), None)


def _list_covers(want: list[Any], have: list[Any]) -> bool:
    key = _list_key(want)
    if key is None:
        if len(want) != len(have):
            return False
        return all(
            owned_diff(w, h) is None if isinstance(w, dict) and isinstance(h, dict) else w == h
            for w, h in zip(want, have, strict=True)
        )
    by_key = {item.get(key): item for item in have if isinstance(item, dict)}
    return all(item[key] in by_key and owned_diff(item, by_key[item[key]]) is None for item in want)


def _overlay_list(want: list[Any], have: list[Any]) -> list[Any]:
    key = _list_key(want)
    if key is None:
        return want
    wanted = {item[key]: item for item in want}
    merged = [
        _overlay(item, wanted[item[key]])
        if isinstance(item, dict) and item.get(key) in wanted
        else item
        for item in have
    ]
    present = {item.get(key) for item in have if isinstance(item, dict)}
    return merged + [item for item in want if item[key] not in present]


def _overlay(have: Body, want: Body) -> Body:
    merged = dict(have)
    for key, value in want.items():
        old = have.get(key)
        if isinstance(value, dict) and isinstance(old, dict):
            merged[key] = _overlay(old, value)
        elif isinstance(value, list) and isinstance(old, list):
            merged[key] = _overlay_list(value, old)
        else:
            merged[key] = value
    return merged


# --- status of a workload: one Deployment of `size` pods running one image -----------------

# Container waiting reasons of a pod that will not start without someone's help; the
# statuses here and opsboard's diagnosis (opsboard/diagnosis/findings.py) read these.
PULL_FAILURES = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName")
CRASHING = ("CrashLoopBackOff",)


def pod_is_ready(pod: Body) -> bool:
    condition = find_condition(deep_get(pod, "status.conditions"), "Ready")
    return condition is not None and condition.get("status") == "True"


def pod_images(pod: Body) -> set[str]:
    return {c.get("image", "") for c in deep_get(pod, "spec.containers", [])}


def _spec_image(pod: Body, status: Body) -> str:
    """The image as the spec names it (a node reports it normalised: docker.io/library/...)."""
    for container in deep_get(pod, "spec.containers", []):
        if container.get("name") == status.get("name"):
            return str(container.get("image"))
    return str(status.get("image", ""))


def _waiting(pods: list[Body], reasons: tuple[str, ...]) -> list[tuple[Body, Body]]:
    """(pod, containerStatus) pairs whose container waits for one of `reasons`."""
    return [
        (pod, status)
        for pod in pods
        for status in deep_get(pod, "status.containerStatuses", [])
        if deep_get(status, "state.waiting.reason") in reasons
    ]


def workload_status(
    cr: Body,
    *,
    pods: list[Body],
    size: int,
    image: str,
    labels: Mapping[str, str],
    now: str,
    problem: Problem | None = None,
) -> Body:
    """The CR's status, told from its pods: nodes, readyReplicas, selector and conditions.

    Available: the ready pods reach the size. Progressing: a scale or rollout is under way.
    Degraded: pods cannot start (the image cannot be pulled, a container crashes), or a
    `problem` found before anything was written (an invalid spec, a child in the way).
    """
    generation = int(deep_get(cr, "metadata.generation", 0))
    live = sorted(
        (p for p in pods if not deep_get(p, "metadata.deletionTimestamp")),
        key=lambda p: p["metadata"]["name"],
    )
    ready = sum(1 for p in live if pod_is_ready(p))
    current = [p for p in live if image in pod_images(p)]
    outdated = len(live) - len(current)

    progressing: tuple[str, str] | None = None
    if outdated:
        progressing = ("RollingOut", f"{len(current)}/{size} pods run {image}")
    elif len(live) < size:
        progressing = ("ScalingUp", f"{len(live)}/{size} pods created")
    elif len(live) > size:
        progressing = ("ScalingDown", f"{len(live)} pods for size {size}")
    elif ready < size:
        progressing = ("PodsStarting", f"{ready}/{size} pods ready")

    degraded: tuple[str, str] | None = None
    if problem:
        degraded = problem
    elif pulls := _waiting(live, PULL_FAILURES):
        # One message for ErrImagePull and ImagePullBackOff: a node alternates between the two,
        # and the condition must not flap with it.
        pod, status = pulls[0]
        degraded = (
            "ImagePullFailed",
            f"Image {_spec_image(pod, status)} cannot be pulled: {len(pulls)} pod(s) wait "
            f"for it, e.g. {pod['metadata']['name']}",
        )
    elif crashes := _waiting(live, CRASHING):
        pod, status = crashes[0]
        degraded = (
            "PodsCrashing",
            f"Container {status.get('name')} keeps crashing: {len(crashes)} pod(s) "
            f"in CrashLoopBackOff, e.g. {pod['metadata']['name']}",
        )

    available = ("PodsReady" if ready >= size else "PodsNotReady", f"{ready}/{size} pods ready")
    verdicts = (
        ("Available", ready >= size, available),
        (
            "Progressing",
            progressing is not None,
            progressing or ("RolloutComplete", f"{size} pods run {image}"),
        ),
        ("Degraded", degraded is not None, degraded or ("AsExpected", "Pods start as expected")),
    )
    conditions = conditions_from(cr, verdicts, observed_generation=generation, now=now)
    return {
        "nodes": [p["metadata"]["name"] for p in live],
        "readyReplicas": ready,
        "selector": selector_string(labels),
        "observedGeneration": generation,
        "conditions": conditions,
    }


# --- what a write changed, told in Kubernetes style for the reconcile log ------------------


def spec_problem(*, image: str, size: int, size_field: str) -> Problem | None:
    """What is wrong with a spec that the API should have rejected (a CRD without validation)."""
    if not is_valid_image(image):
        return INVALID_SPEC, f"spec.image: Invalid value: {image!r}: not a valid image reference"
    if size < 0:
        return (
            INVALID_SPEC,
            f"{size_field}: Invalid value: {size}: must be greater than or equal to 0",
        )
    return None


def ownership_problem(cr: Body, child: Body | None, *, kind: str) -> Problem | None:
    """A child of the same name that another object controls: never take it over.

    (A Memcached and a WebServer of one name in one namespace would both want its Deployment.)
    An existing child with no controller is adopted, as controller-runtime does.
    """
    if child is None:
        return None
    refs = child["metadata"].get("ownerReferences") or []
    owner = next((ref for ref in refs if ref.get("controller")), None)
    if owner is None or owner.get("uid") == cr["metadata"]["uid"]:
        return None
    return CHILD_CONFLICT, (
        f"{kind} {child['metadata']['name']} exists and is controlled by {owner.get('kind')} "
        f"{owner.get('name')}: rename this {cr['kind']} or remove that {kind}"
    )


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
        lines.append(f"Updated status.nodes: {len(new.get('nodes') or [])} pods")
    changes = [
        f"{key} {new[key]}"
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
