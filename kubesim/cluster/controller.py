"""What every simulated controller shares: the context and the base class."""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from kubesim.cluster.api import Api
from kubesim.cluster.cache import Cache
from kubesim.cluster.events import Recorder
from kubesim.cluster.workqueue import WorkQueue

Obj = dict[str, Any]
Key = tuple[str, str]
Watch = Callable[[Obj | None, Obj | None], None]
# The key a controller queues and reconciles: (namespace, name) for most of them.
K = TypeVar("K", bound=Hashable)

DEFAULT_MISSING_IMAGES = ("*:does-not-exist",)


@dataclass
class ClusterOptions:
    nodes: int = 3
    pod_start_delay: float = 0.2
    seed: int | None = None
    # fnmatch patterns of images that no registry has.
    missing_images: list[str] = field(default_factory=lambda: list(DEFAULT_MISSING_IMAGES))
    lease_interval: float = 10.0
    # Pods per node, as a kubelet's --max-pods (110 by default, as on a real node).
    max_pods: int = 110
    # The kubelet's image pull back-off starts here and doubles up to 300 s, as on a real node.
    image_backoff: float = 10.0
    # A crash-looping container's restart back-off starts here and doubles up to 300 s too.
    crash_backoff: float = 10.0
    # How long an Event lives after its last update (kube-apiserver's --event-ttl).
    event_ttl: float = 3600.0
    # Extended resources every node advertises, as a device plugin would: {"example.com/accel": "2"}.
    node_resources: dict[str, str] = field(default_factory=dict)

    @classmethod
    def coerce(cls, options: Any) -> ClusterOptions:
        """Accepts our own options, a mapping, or any object with matching attributes."""
        if isinstance(options, cls):
            return options
        if options is None:
            return cls()
        get: Callable[[str, Any], Any] = (
            options.get if isinstance(options, dict) else lambda k, d: getattr(options, k, d)
        )
        defaults = cls()
        values = {k: get(k, getattr(defaults, k)) for k in defaults.__dataclass_fields__}
        values = {
            k: getattr(defaults, k) if v is None and k != "seed" else v for k, v in values.items()
        }
        values["missing_images"] = list(values["missing_images"])
        values["node_resources"] = dict(values["node_resources"])
        return cls(**values)


@dataclass
class Context:
    api: Api
    cache: Cache
    queue: WorkQueue
    events: Recorder
    options: ClusterOptions
    seed: int | None
    # Separate streams, so that timing (jitter, tie-breaks) never shifts the names drawn.
    jitter: random.Random
    ties: random.Random

    def random(self, purpose: str) -> random.Random:
        """A generator of its own per purpose, repeatable under a seed."""
        return random.Random(None if self.seed is None else f"{self.seed}:{purpose}")

    def start_delay(self) -> float:
        """The configured delay with ±50% jitter, so pods do not all flip at once."""
        return self.options.pod_start_delay * self.jitter.uniform(0.5, 1.5)


class Controller(Generic[K]):
    name = "controller"
    group = "controllers"
    # The resource reconciled, keyed by (namespace, name): its changes queue it, a resync
    # queues all of it. `owns` names the dependents whose changes wake their controlling
    # `kind` object. Controllers that leave them empty watch and resync as they override.
    resource = ""
    owns = ""
    kind = ""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.rng = ctx.random(self.name)  # the names this controller draws

    def watches(self) -> dict[str, Watch]:
        out: dict[str, Watch] = {}
        if self.resource:
            out[self.resource] = lambda old, new: self.enqueue_obj(new or old)
        if self.owns:
            out[self.owns] = lambda old, new: self.enqueue_owner(new or old, self.kind)
        return out

    def reconcile(self, key: K) -> float | None:
        raise NotImplementedError

    def resync(self) -> None:
        """Queues every object this controller reconciles (at start and on resume)."""
        if self.resource:
            for obj in self.ctx.cache.list(self.resource):
                self.enqueue(key_of(obj))

    def current(self, key: Key) -> Obj | None:
        """The object to reconcile, or None when it is gone or being deleted."""
        obj = self.ctx.cache.get(self.resource, *key)
        return None if obj is None or is_deleting(obj) else obj

    def enqueue(self, key: Hashable, delay: float = 0.0) -> None:
        self.ctx.queue.add_after(self.name, key, delay)

    def enqueue_obj(self, obj: Obj | None) -> None:
        if obj is not None:
            self.enqueue(key_of(obj))

    def enqueue_owner(self, obj: Obj | None, kind: str) -> None:
        if obj is None:
            return
        for ref in obj["metadata"].get("ownerReferences") or []:
            if ref.get("controller") and ref.get("kind") == kind:
                self.enqueue((obj["metadata"].get("namespace") or "", ref["name"]))


def key_of(obj: Obj) -> Key:
    return (obj["metadata"].get("namespace") or "", obj["metadata"]["name"])


def controller_ref(owner: Obj) -> Obj:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def is_deleting(obj: Obj) -> bool:
    return bool(obj["metadata"].get("deletionTimestamp"))


def condition(obj: Obj, type_: str) -> Obj | None:
    conditions: list[Obj] = obj.get("status", {}).get("conditions") or []
    for cond in conditions:
        if cond.get("type") == type_:
            return cond
    return None


def pod_ready(pod: Obj) -> bool:
    cond = condition(pod, "Ready")
    return cond is not None and cond.get("status") == "True"


def node_ready(node: Obj) -> bool:
    cond = condition(node, "Ready")
    return cond is not None and cond.get("status") == "True"
