"""The contract between the operators, the reconcile engine and the dashboard.

Pure data and protocols only: no Django, no Celery, no kubernetes client. The engine
implements `Cache` (reads from its mirror), `Kube` (writes through the API) and
`Reporter` (persists actions to the reconcile log and posts Events); a controller
implements `reconcile(ctx) -> Result`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Body = dict[str, Any]  # a Kubernetes object as plain JSON data
Manifest = dict[str, Any]  # a desired object, ready to create or compare
# Which writes since `resource_version` make a patch fail with a Conflict (Kube.patch).
ConflictOn = Literal["any", "own"]


@dataclass(frozen=True)
class Kind:
    """A resource type: enough to call the API and to mirror it."""

    group: str  # "" for core
    version: str
    kind: str
    plural: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def resource(self) -> str:
        """kubectl-style name: "deployments.apps", "pods", "memcacheds.cache.example.com"."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def __str__(self) -> str:
        return self.kind


POD = Kind("", "v1", "Pod", "pods")
SERVICE = Kind("", "v1", "Service", "services")
EVENT = Kind("", "v1", "Event", "events")
PVC = Kind("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims")
DEPLOYMENT = Kind("apps", "v1", "Deployment", "deployments")
REPLICASET = Kind("apps", "v1", "ReplicaSet", "replicasets")
STATEFULSET = Kind("apps", "v1", "StatefulSet", "statefulsets")
DAEMONSET = Kind("apps", "v1", "DaemonSet", "daemonsets")
NODE = Kind("", "v1", "Node", "nodes", namespaced=False)


@dataclass(frozen=True, order=True)
class Key:
    """What a reconcile is about: one primary object of one controller.
    Serialises to "controller/namespace/name", e.g. "memcached/default/web"."""

    controller: str  # the controller name, e.g. "memcached"
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.controller}/{self.namespace}/{self.name}"

    @classmethod
    def parse(cls, text: str) -> Key:
        controller, namespace, name = text.split("/", 2)
        return cls(controller, namespace, name)


@dataclass(frozen=True)
class Result:
    """How a reconcile ended when it did not raise."""

    requeue_after: float | None = None  # seconds; None: done until something changes

    @classmethod
    def done(cls) -> Result:
        return cls()


class TemporaryError(Exception):
    """Worth retrying after `delay` seconds (a conflict, a server that is briefly down)."""

    # Retried, but someone may have to act (a port another Service holds, a webhook that
    # does not answer): the engine says so on the CR too, as Degraded.
    needs_someone = False

    def __init__(self, message: str, *, delay: float | None = None) -> None:
        super().__init__(message)
        self.delay = delay


class PermanentError(Exception):
    """A mistake the user must fix (an invalid spec): reported, never retried in a loop.
    `said`: the API server's own words, without the call, where it answered."""

    def __init__(self, message: str, *, said: str = "") -> None:
        super().__init__(message)
        self.said = said or message


class Reporter(Protocol):
    def action(self, message: str) -> None:
        """Record one thing done to the cluster, Kubernetes style: "Scaled Deployment x
        replicas 3→5". A run's actions are summed up in one Event on the primary object."""

    def status_change(self, message: str) -> None:
        """Record a change of the primary object's own status: kept in the reconcile log,
        never an Event (the status is its own record, as with Kubernetes' controllers)."""

    def event(self, type_: str, reason: str, message: str) -> None:
        """Post a Kubernetes Event on the primary object (type_ "Normal" or "Warning")."""


class Cache(Protocol):
    """Reads, served from the engine's mirror of the watched kinds (an informer cache)."""

    def get(self, kind: Kind, namespace: str, name: str) -> Body | None: ...

    def events_about(self, obj: Body) -> list[Body]:
        """The Events the cache holds whose involvedObject is `obj` (by uid). The engine's
        mirror keeps those about the CRs and the FailedCreate Events of StatefulSets and
        DaemonSets (controllers.refusals), no others."""
        ...

    def list(
        self, kind: Kind, namespace: str, *, labels: Mapping[str, str] | None = None
    ) -> list[Body]: ...


class Kube(Protocol):
    """Writes (and rare live reads), through the Kubernetes API."""

    def get(self, kind: Kind, namespace: str, name: str) -> Body | None: ...

    def create(self, kind: Kind, body: Manifest) -> Body: ...

    def patch(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        patch: Body,
        *,
        resource_version: str | None = None,
        conflict_on: ConflictOn = "any",
    ) -> Body:
        """A JSON merge patch. With `resource_version` (the copy it was computed from), a
        Conflict if the object was written since: by anyone ("any"), or ("own") only if
        that copy may not show this operator's own last write of it; others' writes since
        (a child's controller updating its status) do not stop a patch of fields the
        operator owns. A Kube that keeps no record of its writes takes "own" as "any"."""
        ...

    def begin_patch(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        patch: Body,
        *,
        resource_version: str | None = None,
        conflict_on: ConflictOn = "any",
    ) -> Callable[[], Body]:
        """`patch`, sent now: the call returned waits for the answer and returns, or
        raises, what `patch` would. The caller may work meanwhile, while the server does,
        and send writes that do not depend on the answer (`begin_patch_status`); it makes
        the call whatever happens, and before any write that does."""
        ...

    def patch_status(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        status: Body,
        *,
        resource_version: str | None = None,
    ) -> Body: ...

    def begin_patch_status(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        status: Body,
        *,
        resource_version: str | None = None,
    ) -> Callable[[], Body]:
        """`patch_status`, sent now, as `begin_patch` is."""
        ...

    def delete(self, kind: Kind, namespace: str, name: str) -> None: ...


@dataclass
class Context:
    """Everything one reconcile needs; built by the engine for each run."""

    key: Key
    cache: Cache
    kube: Kube
    report: Reporter
    settings: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ExpectedChild:
    """A child the controller keeps for a CR, so the UI can mark it missing."""

    kind: Kind
    name: str


@dataclass(frozen=True)
class CrFields:
    """A kind's CR fields, as dotted paths, that the dashboard's change form sets and the
    Diagnosis's advice names: those it has (None, or () for the by-container ones)."""

    size: str | None = None  # "spec.size"
    image: str | None = None  # "spec.image"
    # What each pod requests, where the CR has a field for it ("spec.deviceCount"): the
    # advice for pods that fit on no node names it.
    requests: str | None = None
    # The size of each claim its pods mount ("spec.bookDB.dbSize"): the advice for a claim
    # refused names it.
    storage: str | None = None
    # Its Service's NodePort ("spec.nodePort"), unset to let the cluster choose: the advice
    # for a port another Service holds names it.
    node_port: str | None = None
    # The labels of the nodes its pods run on, a map ("spec.nodeSelector"), set whole: the
    # advice for pods no node matches names it.
    node_selector: str | None = None
    # By container, (container, field): the cpu and memory of each ("memcached",
    # "spec.resources"), named by the advice for a container killed for memory; how many
    # pods run it and its image where not `size` and `image` ("mongodb",
    # "spec.bookDB.replicas"; "mongodb", "spec.bookDB.image"), named by the advice for
    # those pods and for an image they cannot pull.
    resources: tuple[tuple[str, str], ...] = ()
    replicas: tuple[tuple[str, str], ...] = ()
    images: tuple[tuple[str, str], ...] = ()
    # Which part of the CR `size` and `image` size and set, when it has several ("App": the
    # form says "App replicas", not a "Size" that reads as the whole CR's).
    part: str = ""

    def image_of(self, container: str) -> str | None:
        """The field that sets `container`'s image: its own, else `image`."""
        return dict(self.images).get(container, self.image)


@dataclass(frozen=True)
class Controller:
    """One operator as the engine and the dashboard see it."""

    name: str  # "memcached": the key prefix, the metrics label, the URL segment
    primary: Kind
    owns: tuple[Kind, ...]
    reconcile: Callable[[Context], Result]
    expected_children: Callable[[Body], list[ExpectedChild]]
    # The CR's fields that the dashboard's change form sets and the Diagnosis's advice names.
    fields: CrFields = CrFields()
    # Owned kinds whose status the reconcile never reads (it compares their spec, and
    # tells the CR's status from pods): a change of their status alone, the same
    # generation, labels, annotations and deletion, is no reason to run.
    # controller-runtime's Owns(..., WithPredicates(GenerationChangedPredicate)). Only
    # kinds whose generation follows their spec (Deployment, StatefulSet; not Service).
    owns_spec_only: tuple[Kind, ...] = ()
