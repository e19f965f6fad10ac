"""What to do about a container the kernel killed for memory (OOMKilled), in the CR's own
field where its operator has one (CrFields.resources) (pure)."""

from __future__ import annotations

import json
import math

from controllers.base import Body
from controllers.fields import deep_get
from controllers.resources import canonical_quantity, parse_quantity
from opsboard.diagnosis.observed import Observed, name_of

LIMIT_RANGER = "kubernetes.io/limit-ranger"  # the annotation naming what a LimitRange set


def out_of_memory_advice(observed: Observed, pod: Body, container: str) -> str:
    """Where the memory limit it hit came from, and what to raise: the CR's field, a
    LimitRange's default (which a pod takes when it is made: the crashing pods must be made
    again), or, with no limit, the node ran out and the request is what to state."""
    spec: Body = next(
        (c for c in deep_get(pod, "spec.containers", []) if c.get("name") == container), {}
    )
    limit = deep_get(spec, "resources.limits.memory")
    request = deep_get(spec, "resources.requests.memory")
    namespace = deep_get(pod, "metadata.namespace", "")
    field = dict(observed.fields.resources).get(container)
    if limit is None and request is None:
        todo = (
            "A LimitRange with a defaultRequest for memory gives new pods one."
            if field is None
            else f"Set {_set(observed, field, 'requests', None)}."
        )
        return (
            "Its node ran out of memory: the pod states no memory request, so the scheduler "
            f"cannot keep it off full nodes. {todo}"
        )
    if limit is None:
        todo = (
            "raise the request, so that it is placed where that much is free."
            if field is None
            else f"raise {_set(observed, field, 'requests', request)}."
        )
        return (
            f"Its node ran out of memory while it used more than its memory request {request}: "
            + todo
        )
    if _limit_range_set_memory_limit(pod, container):
        default = (
            f"It used more than its memory limit {limit}, a LimitRange's default (kubectl -n "
            f"{namespace} get limitrange)"
        )
        if field is None:
            return (
                f"{default}: raise that default, then delete the crashing pods so that new "
                "ones are made with it."
            )
        return (
            f"{default}: give it one of its own, set {_set(observed, field, 'limits', limit)}; "
            "or raise that default, then delete the crashing pods so that new ones take it."
        )
    if field is not None and deep_get(observed.cr, f"{field}.limits.memory") is not None:
        raise_it = _set(observed, field, "limits", limit)
        return f"It used more than its memory limit {limit}: raise {raise_it}."
    return f"It used more than its memory limit {limit}: raise the limit where it is set."


def _set(observed: Observed, field: str, part: str, now: str | None) -> str:
    """`field`.`part`.memory, with the command that sets it to twice `now` (256Mi if none)."""
    more = "256Mi" if now is None else _twice(now)
    patch: Body = {part: {"memory": more}}
    for key in reversed(field.split(".")):
        patch = {key: patch}
    cr = observed.cr
    command = (
        f"kubectl -n {deep_get(cr, 'metadata.namespace', '')} patch "
        f"{str(cr.get('kind', '')).lower()} {name_of(cr)} --type merge -p "
        f"'{json.dumps(patch, separators=(',', ':'))}'"
    )
    return f"{field}.{part}.memory, e.g. to {more} ({command})"


def _twice(quantity: str) -> str:
    try:
        doubled = parse_quantity(quantity) * 2
    except ValueError:
        return "256Mi"
    mebibytes = math.ceil(doubled / 2**20)  # whole Mi: what a person would write
    return canonical_quantity(f"{mebibytes}Mi")


def _limit_range_set_memory_limit(pod: Body, container: str) -> bool:
    """Whether the pod's LimitRanger annotation ("LimitRanger plugin set: cpu, memory limit
    for container x; …") says a LimitRange gave `container` its memory limit."""
    said = (deep_get(pod, "metadata.annotations") or {}).get(LIMIT_RANGER, "")
    for part in str(said).removeprefix("LimitRanger plugin set: ").split("; "):
        resources, _, target = part.partition(" limit for container ")
        if target == container and "memory" in resources.split(", "):
            return True
    return False
