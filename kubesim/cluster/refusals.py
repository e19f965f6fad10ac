"""Pod creates the API server refuses (a quota, an admission plugin, an invalid template).

Every workload controller tells them alike: a FailedCreate Warning on the workload, in its
own words, and the workqueue's per-item back-off while they go on, as the real
controllers' rate-limited requeue does. A namespace going away is no failure: its error
goes on to the caller.
"""

from __future__ import annotations

from kubesim.cluster.controller import Context, Key, Obj
from kubesim.errors import ApiError

REASON = "FailedCreate"


class PodRefused(Exception):
    """A pod create was refused and told: the sync stops creating."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Refusals:
    def __init__(self, ctx: Context, component: str) -> None:
        self.ctx = ctx
        self.component = component
        self._failures: dict[Key, int] = {}  # syncs in a row a pod create was refused

    def tell(self, workload: Obj, exc: ApiError, message: str) -> PodRefused:
        """Posts `message` (the controller's wording of `exc`) as a FailedCreate Warning;
        re-raises `exc` when the namespace is being deleted."""
        namespace = workload["metadata"]["namespace"]
        try:
            going = self.ctx.api.store.get("namespaces", None, namespace)["metadata"]
        except ApiError:
            raise exc from None
        if going.get("deletionTimestamp"):
            raise exc
        self.ctx.events.warning(workload, REASON, message, self.component)
        return PodRefused(exc.message)

    def backoff(self, key: Key) -> float:
        """5 ms, doubling up to 1,000 s, for each sync in a row with a refusal."""
        failures = self._failures[key] = self._failures.get(key, 0) + 1
        return min(0.005 * 2.0 ** (failures - 1), 1000.0)

    def clear(self, key: Key) -> None:
        self._failures.pop(key, None)
