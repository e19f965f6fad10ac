"""Label selectors, node selectors and taint tolerations, as the scheduler reads them."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def labels_of(obj: Obj) -> dict[str, str]:
    return obj.get("metadata", {}).get("labels") or {}


def matches_selector(selector: Obj | None, labels: dict[str, str]) -> bool:
    """A metav1.LabelSelector; an empty selector matches everything, None matches nothing."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    return all(_expression(e, labels) for e in selector.get("matchExpressions") or [])


def matches_map(selector: dict[str, str] | None, labels: dict[str, str]) -> bool:
    """A plain map selector (Service.spec.selector, nodeSelector)."""
    return all(labels.get(k) == v for k, v in (selector or {}).items())


def _expression(expr: Obj, values: dict[str, str]) -> bool:
    key, op, wanted = expr.get("key", ""), expr.get("operator"), expr.get("values") or []
    if op == "In":
        return key in values and values[key] in wanted
    if op == "NotIn":
        return key not in values or values[key] not in wanted
    if op == "Exists":
        return key in values
    if op == "DoesNotExist":
        return key not in values
    if op in ("Gt", "Lt") and key in values:
        try:
            have, bound = int(values[key]), int(wanted[0])
        except (ValueError, IndexError):
            return False
        return have > bound if op == "Gt" else have < bound
    return False


def node_affinity_matches(pod: Obj, node: Obj) -> bool:
    """requiredDuringSchedulingIgnoredDuringExecution: any term matches (terms are ORed)."""
    required = (
        pod.get("spec", {})
        .get("affinity", {})
        .get("nodeAffinity", {})
        .get("requiredDuringSchedulingIgnoredDuringExecution")
    )
    if not required:
        return True
    labels, fields = labels_of(node), {"metadata.name": node["metadata"]["name"]}
    for term in required.get("nodeSelectorTerms") or []:
        exprs = term.get("matchExpressions") or []
        field_exprs = term.get("matchFields") or []
        if not exprs and not field_exprs:
            continue
        if all(_expression(e, labels) for e in exprs) and all(
            _expression(e, fields) for e in field_exprs
        ):
            return True
    return False


def tolerates(tolerations: list[Obj], taint: Obj) -> bool:
    for tol in tolerations:
        if tol.get("effect") and tol["effect"] != taint.get("effect"):
            continue
        if tol.get("operator") == "Exists":
            if not tol.get("key") or tol["key"] == taint.get("key"):
                return True
        elif tol.get("key") == taint.get("key") and (tol.get("value") or "") == (
            taint.get("value") or ""
        ):
            return True
    return False


def untolerated_taint(
    pod: Obj, node: Obj, effects: tuple[str, ...] = ("NoSchedule", "NoExecute")
) -> Obj | None:
    """The first taint of the node with one of `effects` that the pod does not tolerate."""
    tolerations = pod.get("spec", {}).get("tolerations") or []
    taints: list[Obj] = node.get("spec", {}).get("taints") or []
    for taint in taints:
        if taint.get("effect") in effects and not tolerates(tolerations, taint):
            return taint
    return None
