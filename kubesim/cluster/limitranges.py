"""LimitRange defaults and bounds: kube-apiserver's LimitRanger admission, for pods and
PersistentVolumeClaims.

A LimitRange item of type Container gives each container (and init container) that states
no limit or request for a resource its `default` and `defaultRequest`, and says so in the
pod's `kubernetes.io/limit-ranger` annotation. As the API server defaults a LimitRange, an
item's `default` is its `max` where unset and its `defaultRequest` its `default`, then its
`min`. Then, as the plugin's validation does, each new pod is held to the items of each
LimitRange in kube-apiserver's words: each container's requests and limits to each Container
item's `min`, `max` and `maxLimitRequestRatio` ("maximum memory usage per Container is 1Gi,
but limit is 2Gi"), and the pod's, its containers' summed (an init container's own when
larger), to each Pod item's ("maximum memory usage per Pod is 1Gi, but limit is 2Gi"). A
claim's `spec.resources.requests` is held to each PersistentVolumeClaim item's `min` and
`max` at its creation and at each update ("maximum storage usage per PersistentVolumeClaim
is 2Gi, but request is 5Gi"), unless the claim is being deleted. What breaks them is refused
(403), every violation of the first LimitRange that has any said at once ("[a, b]" when more
than one). kube-apiserver takes the LimitRanges, and the bounds of an item's maps, in Go's
random order; kubesim takes LimitRanges by name, and the rest as the LimitRange lists them.
A claim's status writes are not judged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from kubesim import errors
from kubesim.defaults import initial_status
from kubesim.quantity import canonical_quantity, parse_quantity

Obj = dict[str, Any]
ANNOTATION = "kubernetes.io/limit-ranger"
KINDS = (("container", "containers"), ("init container", "initContainers"))  # in this order
# A quantity's value, and a quantity written in the suffix family it prints in.
Amount = tuple[Decimal, str]
Amounts = dict[str, Amount]
_BINARY = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_EXPONENT = re.compile(r"\d[eE][-+]?\d+$")


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


def shown_as(amount: Amount) -> str:
    """Quantity.String() of an amount, in its family: a sum prints as its first addend."""
    value, like = amount
    if like.endswith(_BINARY):
        return canonical_quantity(f"{value / 1024:f}Ki")
    return canonical_quantity(f"{value:f}e0" if _EXPONENT.search(like) else f"{value:f}")


def _amounts(resources: Obj | None) -> Amounts:
    return {k: (parse_quantity(v), str(v)) for k, v in (resources or {}).items()}


def _add(total: Amounts, more: Amounts) -> Amounts:
    """addResourceList, into `total`: a sum still at zero takes the next addend's format."""
    for name, (value, like) in more.items():
        have, have_like = total.get(name, (Decimal(0), like))
        total[name] = (have + value, have_like if have else like)
    return total


def _larger(total: Amounts, more: Amounts) -> None:
    """maxResourceList: each of `more` replaces what `total` holds when strictly larger."""
    for name, amount in more.items():
        if name not in total or amount[0] > total[name][0]:
            total[name] = amount


def _pod_total(spec: Obj, field: str) -> Amounts:
    """podRequests/podLimits: the containers' sum, or the largest init container's where
    that is larger. (No init container is a sidecar: v1.28's API server drops an init
    container's restartPolicy, its SidecarContainers gate being off.)"""
    total: Amounts = {}
    for container in spec.get("containers") or []:
        _add(total, _amounts((container.get("resources") or {}).get(field)))
    init: Amounts = {}
    for container in spec.get("initContainers") or []:
        _larger(init, _amounts((container.get("resources") or {}).get(field)))
    _larger(total, init)
    return total


def _min(kind: str, name: str, bound: str, requests: Amounts, limits: Amounts) -> str | None:
    """minConstraint's words, or None."""
    floor = canonical_quantity(bound)
    if name not in requests:
        return f"minimum {name} usage per {kind} is {floor}.  No request is specified"
    if requests[name][0] < parse_quantity(bound):
        return (
            f"minimum {name} usage per {kind} is {floor}, but request is {shown_as(requests[name])}"
        )
    if name in limits and limits[name][0] < parse_quantity(bound):
        return f"minimum {name} usage per {kind} is {floor}, but limit is {shown_as(limits[name])}"
    return None


def _max(kind: str, name: str, bound: str, requests: Amounts, limits: Amounts) -> str | None:
    """maxConstraint's words, or None."""
    ceiling = canonical_quantity(bound)
    if name not in limits:
        return f"maximum {name} usage per {kind} is {ceiling}.  No limit is specified"
    if limits[name][0] > parse_quantity(bound):
        return (
            f"maximum {name} usage per {kind} is {ceiling}, but limit is {shown_as(limits[name])}"
        )
    if name in requests and requests[name][0] > parse_quantity(bound):
        return f"maximum {name} usage per {kind} is {ceiling}, but request is {shown_as(requests[name])}"
    return None


def _max_request(kind: str, name: str, bound: str, requests: Amounts) -> str | None:
    """maxRequestConstraint's words, or None: a claim states requests only."""
    ceiling = canonical_quantity(bound)
    if name not in requests:
        return f"maximum {name} usage per {kind} is {ceiling}.  No request is specified"
    if requests[name][0] > parse_quantity(bound):
        return f"maximum {name} usage per {kind} is {ceiling}, but request is {shown_as(requests[name])}"
    return None


def _ratio(kind: str, name: str, bound: str, requests: Amounts, limits: Amounts) -> str | None:
    """limitRequestRatioConstraint's words, or None."""
    said = f"{name} max limit to request ratio per {kind} is {canonical_quantity(bound)}"
    request = requests.get(name, (Decimal(0), ""))[0]
    limit = limits.get(name, (Decimal(0), ""))[0]
    if not request:
        return f"{said}, but no request is specified or request is 0"
    if not limit:
        return f"{said}, but no limit is specified or limit is 0"
    if limit / request > parse_quantity(bound):
        return f"{said}, but provided ratio is {float(limit / request):f}"
    return None


def _bounds(kind: str, item: Obj, requests: Amounts, limits: Amounts) -> list[str]:
    """An item's min, max and maxLimitRequestRatio checked against a container or a pod."""
    found = [
        *(_min(kind, k, v, requests, limits) for k, v in (item.get("min") or {}).items()),
        *(_max(kind, k, v, requests, limits) for k, v in (item.get("max") or {}).items()),
        *(
            _ratio(kind, k, v, requests, limits)
            for k, v in (item.get("maxLimitRequestRatio") or {}).items()
        ),
    ]
    return [words for words in found if words is not None]


def _pod_violations(item: Obj, spec: Obj) -> list[str]:
    """PodValidateLimitFunc's checks of a pod against one item."""
    if item.get("type") == "Pod":
        return _bounds("Pod", item, _pod_total(spec, "requests"), _pod_total(spec, "limits"))
    if item.get("type") != "Container":
        return []
    found = []
    for _, field in KINDS:
        for container in spec.get(field) or []:
            resources = container.get("resources") or {}
            requests, limits = (
                _amounts(resources.get("requests")),
                _amounts(resources.get("limits")),
            )
            found += _bounds("Container", item, requests, limits)
    return found


def _claim_violations(item: Obj, claim: Obj) -> list[str]:
    """PersistentVolumeClaimValidateLimitFunc's checks of a claim's requests against one
    item: a claim has no limits, and its max is held against what it requests."""
    if item.get("type") != "PersistentVolumeClaim":
        return []
    kind = "PersistentVolumeClaim"
    requests = _amounts(((claim.get("spec") or {}).get("resources") or {}).get("requests"))
    found = [
        *(_min(kind, k, v, requests, {}) for k, v in (item.get("min") or {}).items()),
        *(_max_request(kind, k, v, requests) for k, v in (item.get("max") or {}).items()),
    ]
    return [words for words in found if words is not None]


def aggregate(messages: list[str]) -> str:
    """utilerrors.NewAggregate's Error(): once each, in "[a, b]" when more than one."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else f"[{', '.join(unique)}]"


def _items(limit_range: Obj) -> list[Obj]:
    return list((limit_range.get("spec") or {}).get("limits") or [])


class LimitRanger:
    """Fills each new pod's containers from the namespace's LimitRanges, in name order, and
    holds pods and claims to their bounds."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def install(self) -> None:
        self.store.register_admission("pods", self.admit)
        self.store.register_admission("persistentvolumeclaims", self.admit_claim)

    def _ranges(self, obj: Obj) -> list[Obj]:
        ranges = self.store.list("limitranges", obj["metadata"].get("namespace"))
        return sorted(ranges, key=lambda r: str(r["metadata"]["name"]))

    def _refuse_first(self, resource: str, obj: Obj, found: Iterable[list[str]]) -> None:
        """runLimitFunc: the first LimitRange that refuses says all it has against it."""
        for refused in found:
            if refused:
                raise errors.forbidden(
                    resource, obj["metadata"].get("name", ""), aggregate(refused)
                )

    def admit(self, op: str, new: Obj | None, old: Obj | None) -> None:
        if op != "CREATE" or new is None:  # a pod's containers cannot change after
            return
        ranges = self._ranges(new)
        spec = new.get("spec") or {}
        for limit_range in ranges:
            limits: Obj = {}
            requests: Obj = {}
            for item in _items(limit_range):
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
        self._refuse_first(
            "pods",
            new,
            ([w for item in _items(r) for w in _pod_violations(item, spec)] for r in ranges),
        )

    def admit_claim(self, op: str, new: Obj | None, old: Obj | None) -> None:
        if new is None or op not in ("CREATE", "UPDATE"):
            return
        # A claim going away is let be; so is a status write, the one write whose spec is
        # the stored object's own (the store shares it, where every other write decodes one).
        if old is not None and (
            old["metadata"].get("deletionTimestamp") or new.get("spec") is old.get("spec")
        ):
            return
        self._refuse_first(
            "persistentvolumeclaims",
            new,
            (
                [w for item in _items(r) for w in _claim_violations(item, new)]
                for r in self._ranges(new)
            ),
        )
