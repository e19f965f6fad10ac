"""The disruption controller: each PodDisruptionBudget's status from the pods it selects."""

from __future__ import annotations

import math

from kubesim.cluster.controller import Controller, Key, Obj, Watch, is_deleting, key_of, pod_ready
from kubesim.cluster.selectors import labels_of, matches_selector
from kubesim.cluster.workloads import set_condition, write_status

BUDGETS = "poddisruptionbudgets.policy"


class NoController(Exception):
    """A pod whose expected count cannot be known (the real controller's sync error)."""


class DisruptionController(Controller[Key]):
    name = "disruption"
    resource = BUDGETS

    def watches(self) -> dict[str, Watch]:
        return {**super().watches(), "pods": self._pod_changed}

    def _pod_changed(self, old: Obj | None, new: Obj | None) -> None:
        pod = new or old
        assert pod is not None
        for budget in self.ctx.cache.list(BUDGETS, pod["metadata"]["namespace"]):
            selector = budget.get("spec", {}).get("selector")
            if any(p is not None and matches_selector(selector, labels_of(p)) for p in (old, new)):
                self.enqueue(key_of(budget))

    def reconcile(self, key: Key) -> float | None:
        budget = self.current(key)
        if budget is None:
            return None
        selector = budget.get("spec", {}).get("selector")
        pods = [
            p
            for p in self.ctx.cache.list("pods", key[0])
            if matches_selector(selector, labels_of(p))
        ]
        generation = budget["metadata"].get("generation", 1)
        try:
            expected, desired = self._expected(budget, pods)
        except NoController as exc:
            # The real controller's failSafe: no disruption is allowed until it can count.
            status: Obj = {**budget.get("status", {}), "disruptionsAllowed": 0}
            status["conditions"] = set_condition(
                status.get("conditions") or [],
                _condition(False, "SyncFailed", str(exc), generation),
            )
            write_status(self.ctx, BUDGETS, budget, status)
            return None
        healthy = sum(1 for p in pods if not is_deleting(p) and pod_ready(p))
        allowed = max(healthy - desired, 0) if expected > 0 else 0
        status = {
            "observedGeneration": generation,
            "disruptionsAllowed": allowed,
            "currentHealthy": healthy,
            "desiredHealthy": desired,
            "expectedPods": expected,
        }
        sufficient = allowed > 0
        status["conditions"] = set_condition(
            budget.get("status", {}).get("conditions") or [],
            _condition(
                sufficient, "SufficientPods" if sufficient else "InsufficientPods", "", generation
            ),
        )
        write_status(self.ctx, BUDGETS, budget, status)
        return None

    def _expected(self, budget: Obj, pods: list[Obj]) -> tuple[int, int]:
        """(expectedPods, desiredHealthy), as getExpectedPodCount works them out."""
        spec = budget.get("spec", {})
        max_unavailable, min_available = spec.get("maxUnavailable"), spec.get("minAvailable")
        if max_unavailable is not None:
            expected = self._scale(pods)
            return expected, max(expected - _scaled(max_unavailable, expected), 0)
        if isinstance(min_available, int):
            return len(pods), min_available
        if min_available is not None:
            expected = self._scale(pods)
            return expected, _scaled(min_available, expected)
        return 0, 0

    def _scale(self, pods: list[Obj]) -> int:
        """The replicas of the controllers of the pods (each counted once)."""
        seen: dict[tuple[str, str], int] = {}
        for pod in pods:
            owner = self._controller_of(pod)
            seen[(owner["kind"], owner["metadata"]["name"])] = owner["spec"].get("replicas", 1)
        return sum(seen.values())

    def _controller_of(self, pod: Obj) -> Obj:
        namespace = pod["metadata"]["namespace"]
        ref = _controller_ref(pod)
        if ref is not None and ref.get("kind") == "ReplicaSet":
            rs = self.ctx.cache.get("replicasets.apps", namespace, ref["name"])
            if rs is not None:
                deployment_ref = _controller_ref(rs)
                if deployment_ref is not None and deployment_ref.get("kind") == "Deployment":
                    found = self.ctx.cache.get(
                        "deployments.apps", namespace, deployment_ref["name"]
                    )
                    if found is not None:
                        return found
                return rs
        if ref is not None and ref.get("kind") == "StatefulSet":
            found = self.ctx.cache.get("statefulsets.apps", namespace, ref["name"])
            if found is not None:
                return found
        raise NoController(f"found no controllers for pod {pod['metadata']['name']!r}")


def _controller_ref(obj: Obj) -> Obj | None:
    refs: list[Obj] = obj["metadata"].get("ownerReferences") or []
    for ref in refs:
        if ref.get("controller"):
            return ref
    return None


def _scaled(value: int | str, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent, rounding up."""
    if isinstance(value, int):
        return value
    return math.ceil(int(value.rstrip("%")) * total / 100)


def _condition(allowed: bool, reason: str, message: str, generation: int) -> Obj:
    return {
        "type": "DisruptionAllowed",
        "status": "True" if allowed else "False",
        "observedGeneration": generation,
        "reason": reason,
        "message": message,
    }
