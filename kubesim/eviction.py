"""policy/v1 Eviction: delete a pod only if its PodDisruptionBudget allows it.

What kube-apiserver's eviction REST does (pkg/registry/core/pod/storage/eviction.go): pods
that are not running, or already terminating, go at once; otherwise the one budget that
selects the pod must allow a disruption, which the eviction spends (disruptionsAllowed - 1
and the pod listed under disruptedPods) before the pod is deleted.
"""

from __future__ import annotations

import datetime
from typing import Any

from kubesim import errors
from kubesim.errors import ApiError
from kubesim.selectors import match_labels_dict

BUDGETS = "poddisruptionbudgets.policy"
_ATTEMPTS = 3  # the budget's status may move under us; the real server retries too


def evict(store: Any, namespace: str, name: str, opts: dict[str, Any], *, dry_run: bool) -> None:
    """Deletes the pod as the Eviction's DeleteOptions say, or raises 429 for its budget."""
    for attempt in range(_ATTEMPTS):
        pod = store.get("pods", namespace, name)
        budget = _budget_for(store, pod)
        if budget is None or _ignores_budget(pod, budget):
            break
        try:
            _spend(store, budget, name, dry_run=dry_run)
            break
        except ApiError as exc:
            if exc.code != 409 or attempt == _ATTEMPTS - 1:
                raise
    store.delete_entry(
        "pods",
        namespace,
        name,
        propagation=opts.get("propagationPolicy"),
        grace_period_seconds=opts.get("gracePeriodSeconds"),
        preconditions=opts.get("preconditions"),
        dry_run=dry_run,
    )


def _budget_for(store: Any, pod: dict[str, Any]) -> dict[str, Any] | None:
    labels = pod["metadata"].get("labels") or {}
    budgets = [
        b
        for b in store.list(BUDGETS, pod["metadata"]["namespace"])
        if match_labels_dict((b.get("spec") or {}).get("selector"), labels)
    ]
    if len(budgets) > 1:
        raise errors.internal(
            "This pod has more than one PodDisruptionBudget, which the eviction subresource "
            "does not support."
        )
    return budgets[0] if budgets else None


def _ignores_budget(pod: dict[str, Any], budget: dict[str, Any]) -> bool:
    status = pod.get("status") or {}
    if pod["metadata"].get("deletionTimestamp") or status.get("phase") in (
        "Pending",
        "Succeeded",
        "Failed",
    ):
        return True
    if _ready(pod):
        return False
    # An unhealthy pod may go when the budget is met anyway (IfHealthyBudget, the default).
    if (budget.get("spec") or {}).get("unhealthyPodEvictionPolicy") == "AlwaysAllow":
        return True
    counts = budget.get("status") or {}
    desired: int = counts.get("desiredHealthy", 0)
    current: int = counts.get("currentHealthy", 0)
    return desired > 0 and current >= desired


def _ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _spend(store: Any, budget: dict[str, Any], pod_name: str, *, dry_run: bool) -> None:
    name, status = budget["metadata"]["name"], budget.get("status") or {}
    if status.get("observedGeneration", 0) < budget["metadata"].get("generation", 1):
        raise _refused(f"The disruption budget {name} is still being processed by the server.")
    allowed = status.get("disruptionsAllowed", 0)
    if allowed < 0:
        raise errors.forbidden(BUDGETS, name, "pdb disruptions allowed is negative")
    if allowed == 0:
        raise _refused(
            f"The disruption budget {name} needs {status.get('desiredHealthy', 0)} healthy pods "
            f"and has {status.get('currentHealthy', 0)} currently"
        )
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    spent = {
        **status,
        "disruptionsAllowed": allowed - 1,
        "disruptedPods": {**(status.get("disruptedPods") or {}), pod_name: now},
    }
    store.update(BUDGETS, {**budget, "status": spent}, subresource="status", dry_run=dry_run)


def _refused(cause: str) -> ApiError:
    return ApiError(
        429,
        "TooManyRequests",
        "Cannot evict pod as it would violate the pod's disruption budget.",
        {"causes": [{"reason": "DisruptionBudget", "message": cause}]},
    )
