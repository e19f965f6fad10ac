"""ResourceQuota for pod counts: kube-apiserver's ResourceQuota admission plugin and the
status kube-controller-manager's resourcequota controller keeps.

Only `pods` (pods not yet Succeeded or Failed) and `count/pods` (every pod stored) are
counted and enforced; quotas with scopes are left alone, as are their other resources.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from kubesim import errors
from kubesim.cluster import names
from kubesim.cluster.controller import Controller, Key, Obj, Watch
from kubesim.cluster.workloads import write_status
from kubesim.quantity import parse_quantity

PODS, POD_COUNT = "pods", "count/pods"
COUNTED = (POD_COUNT, PODS)  # sorted, as the admission's messages list resources


def pod_usage(pods: list[Obj]) -> dict[str, int]:
    """What the pods hold of each counted resource (PodUsageFunc)."""
    return {POD_COUNT: len(pods), PODS: sum(_holds_pod_quota(p) for p in pods)}


def _holds_pod_quota(pod: Obj) -> bool:
    """QuotaV1Pod: a finished pod, or one terminating past its grace period, frees its place."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    meta = pod["metadata"]
    deleting = names.parse_time(meta.get("deletionTimestamp"))
    grace = meta.get("deletionGracePeriodSeconds")
    if deleting is None or grace is None:
        return True
    return names.now() <= deleting + timedelta(seconds=int(grace))


def _counted_limits(quota: Obj) -> dict[str, Decimal]:
    """The quota's hard limits on counted resources; none for a scoped quota."""
    spec = quota.get("spec") or {}
    if spec.get("scopes") or spec.get("scopeSelector"):
        return {}
    hard = spec.get("hard") or {}
    limits = {}
    for name in COUNTED:
        try:
            limits[name] = parse_quantity(hard[name])
        except (KeyError, ValueError):  # not limited, or not a quantity: kubesim does not validate
            continue
    return limits


def _listed(values: dict[str, Any]) -> str:
    """prettyPrint of a ResourceList: `name=value` pairs by name, comma-separated."""
    return ",".join(f"{name}={values[name]}" for name in sorted(values))


class QuotaAdmission:
    """Refuses a pod that would take a namespace past a quota's `pods` or `count/pods`."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def install(self) -> None:
        self.store.register_admission("pods", self.admit)

    def admit(self, op: str, new: Obj | None, old: Obj | None) -> None:
        if op != "CREATE" or new is None:
            return
        namespace, name = new["metadata"]["namespace"], new["metadata"]["name"]
        quotas = [(q, _counted_limits(q)) for q in self.store.list("resourcequotas", namespace)]
        quotas = [(q, limits) for q, limits in quotas if limits]
        if not quotas:
            return
        used = pod_usage(self.store.list("pods", namespace))
        requested = pod_usage([new])
        # kube-apiserver checks the quotas in its cache's order; here by name, to repeat.
        for quota, limits in sorted(quotas, key=lambda q: str(q[0]["metadata"]["name"])):
            exceeded = sorted(r for r, limit in limits.items() if used[r] + requested[r] > limit)
            if exceeded:
                hard = quota["spec"]["hard"]
                raise errors.forbidden(
                    "pods",
                    name,
                    f"exceeded quota: {quota['metadata']['name']}, "
                    f"requested: {_listed({r: requested[r] for r in exceeded})}, "
                    f"used: {_listed({r: used[r] for r in exceeded})}, "
                    f"limited: {_listed({r: hard[r] for r in exceeded})}",
                )


class ResourceQuotaController(Controller[Key]):
    """Keeps `status.hard` (the spec's) and `status.used` of the counted resources."""

    name = "resourcequota"
    resource = "resourcequotas"

    def watches(self) -> dict[str, Watch]:
        return {**super().watches(), "pods": self._pod_changed}

    def _pod_changed(self, old: Obj | None, new: Obj | None) -> None:
        namespace = (new or old or {}).get("metadata", {}).get("namespace", "")
        for quota in self.ctx.cache.list(self.resource, namespace):
            self.enqueue_obj(quota)

    def reconcile(self, key: Key) -> float | None:
        quota = self.current(key)
        if quota is None:
            return None
        hard = dict((quota.get("spec") or {}).get("hard") or {})
        usage = pod_usage(self.ctx.cache.list("pods", key[0]))
        used = {r: str(usage[r]) for r in _counted_limits(quota)}
        write_status(self.ctx, self.resource, quota, {"hard": hard, "used": used})
        return None
