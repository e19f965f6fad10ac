"""LimitRange defaults: kube-apiserver's LimitRanger admission, for pods' containers.

A LimitRange item of type Container gives each container (and init container) that states
no limit or request for a resource its `default` and `defaultRequest`, and says so in the
pod's `kubernetes.io/limit-ranger` annotation. As the API server defaults a LimitRange, an
item's `default` is its `max` where unset and its `defaultRequest` its `default`, then its
`min`. min, max and maxLimitRequestRatio are not enforced.
"""

from __future__ import annotations

from typing import Any

from kubesim.defaults import initial_status

Obj = dict[str, Any]
ANNOTATION = "kubernetes.io/limit-ranger"
KINDS = (("container", "containers"), ("init container", "initContainers"))  # in this order


def container_defaults(item: Obj) -> tuple[dict[str, Any], dict[str, Any]]:
    """A Container item's default limits and requests, defaulted as the API server does."""
    limits = {**(item.get("max") or {}), **(item.get("default") or {})}
    requests = {**(item.get("min") or {}), **limits, **(item.get("defaultRequest") or {})}
    return limits, requests


def _merge(container: Obj, limits: Obj, requests: Obj, prefix: str) -> list[str]:
    """mergeContainerResources: what is missing set, and the annotation's words for it."""
    resources = container.setdefault("resources", {})
    said = []
    for field, defaults, word in (("requests", requests, "request"), ("limits", limits, "limit")):
        stated = resources.get(field) or {}
        added = {k: v for k, v in defaults.items() if k not in stated}
        if added:
            resources[field] = {**stated, **added}
            said.append(f"{', '.join(sorted(added))} {word} for {prefix} {container['name']}")
    return said


class LimitRanger:
    """Fills each new pod's containers from the namespace's LimitRanges, in name order."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def install(self) -> None:
        self.store.register_admission("pods", self.admit)

    def admit(self, op: str, new: Obj | None, old: Obj | None) -> None:
        if op != "CREATE" or new is None:
            return
        ranges = self.store.list("limitranges", new["metadata"].get("namespace"))
        spec = new.get("spec") or {}
        for limit_range in sorted(ranges, key=lambda r: str(r["metadata"]["name"])):
            limits: Obj = {}
            requests: Obj = {}
            for item in (limit_range.get("spec") or {}).get("limits") or []:
                if item.get("type") == "Container":
                    more_limits, more_requests = container_defaults(item)
                    limits.update(more_limits)
                    requests.update(more_requests)
            said = [
                words
                for prefix, field in KINDS
                for container in spec.get(field) or []
                for words in _merge(container, limits, requests, prefix)
            ]
            if said:  # each LimitRange that set something says so in place of the last
                annotations = new["metadata"].setdefault("annotations", {})
                annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(said)
                new["status"] = initial_status("pods", new)  # its QoS, from what it states now
