"""LimitRange defaults: kube-apiserver's LimitRanger admission, for pods' containers.

A LimitRange item of type Container gives each container (and init container) that states
no limit or request for a resource its `default` and `defaultRequest`, and says so in the
pod's `kubernetes.io/limit-ranger` annotation. As the API server defaults a LimitRange, an
item's `default` is its `max` where unset and its `defaultRequest` its `default`, then its
`min`. Then, as the plugin's validation does, each container's requests and limits are held
to each Container item's `min`, `max` and `maxLimitRequestRatio`, in kube-apiserver's words
("maximum memory usage per Container is 1Gi, but limit is 2Gi"): a pod outside them is
refused (403), every violation of every LimitRange said at once ("[a, b]" when more than
one). kube-apiserver walks each of those maps in Go's random order; kubesim in the order the
LimitRange lists them. Items of type Pod and PersistentVolumeClaim are not enforced.
"""

from __future__ import annotations

from typing import Any

from kubesim import errors
from kubesim.defaults import initial_status
from kubesim.quantity import canonical_quantity, parse_quantity

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


def _violations(item: Obj, container: Obj) -> list[str]:
    """PodValidateLimitFunc's checks of one container against one Container item."""
    resources = container.get("resources") or {}
    requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
    found = []
    for name, bound in (item.get("min") or {}).items():
        floor = canonical_quantity(bound)
        if name not in requests:
            found.append(f"minimum {name} usage per Container is {floor}.  No request is specified")
        elif parse_quantity(requests[name]) < parse_quantity(bound):
            found.append(
                f"minimum {name} usage per Container is {floor}, but request is "
                f"{canonical_quantity(requests[name])}"
            )
        elif name in limits and parse_quantity(limits[name]) < parse_quantity(bound):
            found.append(
                f"minimum {name} usage per Container is {floor}, but limit is "
                f"{canonical_quantity(limits[name])}"
            )
    for name, bound in (item.get("max") or {}).items():
        ceiling = canonical_quantity(bound)
        if name not in limits:
            found.append(f"maximum {name} usage per Container is {ceiling}.  No limit is specified")
        elif parse_quantity(limits[name]) > parse_quantity(bound):
            found.append(
                f"maximum {name} usage per Container is {ceiling}, but limit is "
                f"{canonical_quantity(limits[name])}"
            )
        elif name in requests and parse_quantity(requests[name]) > parse_quantity(bound):
            found.append(
                f"maximum {name} usage per Container is {ceiling}, but request is "
                f"{canonical_quantity(requests[name])}"
            )
    for name, bound in (item.get("maxLimitRequestRatio") or {}).items():
        said = f"{name} max limit to request ratio per Container is {canonical_quantity(bound)}"
        request, limit = parse_quantity(requests.get(name, 0)), parse_quantity(limits.get(name, 0))
        if not request:
            found.append(f"{said}, but no request is specified or request is 0")
        elif not limit:
            found.append(f"{said}, but no limit is specified or limit is 0")
        elif limit / request > parse_quantity(bound):
            found.append(f"{said}, but provided ratio is {float(limit / request):f}")
    return found


def aggregate(messages: list[str]) -> str:
    """utilerrors.NewAggregate's Error(): once each, in "[a, b]" when more than one."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else f"[{', '.join(unique)}]"


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
        refused = [
            words
            for limit_range in sorted(ranges, key=lambda r: str(r["metadata"]["name"]))
            for item in (limit_range.get("spec") or {}).get("limits") or []
            if item.get("type") == "Container"
            for _, field in KINDS
            for container in spec.get(field) or []
            for words in _violations(item, container)
        ]
        if refused:
            name = new["metadata"].get("name", "")
            raise errors.forbidden("pods", name, aggregate(refused))
