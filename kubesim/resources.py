"""The resource types kubesim serves: built-in kinds plus those CRDs define at run time.

A resource is named kubectl-style, "plural.group" ("deployments.apps", "pods"), which is also
the key the store uses.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
NO_COLLECTION = ("create", "delete", "get", "list", "patch", "update", "watch")


@dataclass
class ResourceType:
    group: str
    version: str  # the preferred (storage) version
    plural: str
    singular: str
    kind: str
    namespaced: bool = True
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    status: bool = False  # has the status subresource
    scale: bool = False  # has the scale subresource
    tracks_generation: bool = False
    # Scale subresource paths (dotted, as CRDs give them).
    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: str | None = ".status.selector"
    extra_subresources: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # CRD-only: served versions -> {"schema", "columns"}; the CRD that defines this type.
    versions: tuple[str, ...] = ()
    version_info: dict[str, dict[str, Any]] = field(default_factory=dict)
    crd: str | None = None
    preserve_unknown: bool = True  # built-ins are not pruned by kubesim
    # The registry's ReturnDeletedObject: a finished DELETE answers the object, not a Status.
    returns_deleted: bool = False

    @property
    def key(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def api_version_for(self, version: str) -> str:
        return f"{self.group}/{version}" if self.group else version

    @property
    def served_versions(self) -> tuple[str, ...]:
        return self.versions or (self.version,)

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    def subresources(self) -> dict[str, tuple[str, ...]]:
        subs = dict(self.extra_subresources)
        if self.status:
            subs["status"] = ("get", "patch", "update")
        if self.scale:
            subs["scale"] = ("get", "patch", "update")
        return subs


def _b(group: str, version: str, plural: str, kind: str, **kw: Any) -> ResourceType:
    singular = kw.pop("singular", kind.lower())
    return ResourceType(group, version, plural, singular, kind, **kw)


_ASK_CLUSTER: dict[str, Any] = {"namespaced": False, "verbs": ("create",)}
_WORKLOAD = {"status": True, "scale": True, "tracks_generation": True, "categories": ("all",)}

BUILTINS: tuple[ResourceType, ...] = (
    _b(
        "",
        "v1",
        "namespaces",
        "Namespace",
        returns_deleted=True,
        namespaced=False,
        short_names=("ns",),
        verbs=NO_COLLECTION,
        status=True,
        extra_subresources={"finalize": ("update",)},
    ),
    _b(
        "",
        "v1",
        "pods",
        "Pod",
        returns_deleted=True,
        short_names=("po",),
        categories=("all",),
        status=True,
        extra_subresources={"binding": ("create",), "eviction": ("create",), "log": ("get",)},
    ),
    _b(
        "",
        "v1",
        "services",
        "Service",
        returns_deleted=True,
        short_names=("svc",),
        categories=("all",),
        status=True,
        verbs=("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"),
    ),
    _b("", "v1", "endpoints", "Endpoints", short_names=("ep",), singular="endpoints"),
    _b("", "v1", "configmaps", "ConfigMap", short_names=("cm",)),
    _b("", "v1", "secrets", "Secret"),
    _b("", "v1", "events", "Event", short_names=("ev",)),
    _b(
        "",
        "v1",
        "persistentvolumeclaims",
        "PersistentVolumeClaim",
        returns_deleted=True,
        short_names=("pvc",),
        status=True,
    ),
    _b(
        "",
        "v1",
        "persistentvolumes",
        "PersistentVolume",
        returns_deleted=True,
        namespaced=False,
        short_names=("pv",),
        status=True,
    ),
    _b("", "v1", "nodes", "Node", namespaced=False, short_names=("no",), status=True),
    _b(
        "",
        "v1",
        "serviceaccounts",
        "ServiceAccount",
        short_names=("sa",),
        returns_deleted=True,
        extra_subresources={"token": ("create",)},
    ),
    _b("apps", "v1", "deployments", "Deployment", short_names=("deploy",), **_WORKLOAD),
    _b("apps", "v1", "replicasets", "ReplicaSet", short_names=("rs",), **_WORKLOAD),
    _b("apps", "v1", "statefulsets", "StatefulSet", short_names=("sts",), **_WORKLOAD),
    _b(
        "apps",
        "v1",
        "daemonsets",
        "DaemonSet",
        short_names=("ds",),
        status=True,
        tracks_generation=True,
        categories=("all",),
    ),
    _b("apps", "v1", "controllerrevisions", "ControllerRevision"),
    _b(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        namespaced=False,
        short_names=("crd", "crds"),
        categories=("api-extensions",),
        status=True,
        tracks_generation=True,
    ),
    _b("coordination.k8s.io", "v1", "leases", "Lease"),
    _b("events.k8s.io", "v1", "events", "Event", short_names=("ev",)),
    _b("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice"),
    _b(
        "networking.k8s.io",
        "v1",
        "networkpolicies",
        "NetworkPolicy",
        singular="networkpolicy",
        short_names=("netpol",),
    ),
    _b("", "v1", "resourcequotas", "ResourceQuota", short_names=("quota",), status=True),
    _b("", "v1", "limitranges", "LimitRange", short_names=("limits",)),
    # Stored and listed; no controller runs them (see README: deliberate differences).
    _b("batch", "v1", "jobs", "Job", status=True, categories=("all",)),
    _b("batch", "v1", "cronjobs", "CronJob", short_names=("cj",), status=True, categories=("all",)),
    _b(
        "policy",
        "v1",
        "poddisruptionbudgets",
        "PodDisruptionBudget",
        short_names=("pdb",),
        status=True,
        tracks_generation=True,
    ),
    _b(
        "storage.k8s.io",
        "v1",
        "storageclasses",
        "StorageClass",
        returns_deleted=True,
        namespaced=False,
        short_names=("sc",),
    ),
    # Called at every write they match (kubesim/cluster/webhooks.py).
    _b(
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        namespaced=False,
        categories=("api-extensions",),
    ),
    # Questions, not objects: created and answered, never stored (kubesim/reviews.py).
    _b("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", **_ASK_CLUSTER),
    _b("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", **_ASK_CLUSTER),
    _b(
        "authorization.k8s.io",
        "v1",
        "localsubjectaccessreviews",
        "LocalSubjectAccessReview",
        verbs=("create",),
    ),
    _b(
        "authorization.k8s.io",
        "v1",
        "selfsubjectaccessreviews",
        "SelfSubjectAccessReview",
        **_ASK_CLUSTER,
    ),
    _b(
        "authorization.k8s.io",
        "v1",
        "selfsubjectrulesreviews",
        "SelfSubjectRulesReview",
        **_ASK_CLUSTER,
    ),
    _b("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", **_ASK_CLUSTER),
    _b("rbac.authorization.k8s.io", "v1", "roles", "Role"),
    _b("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding"),
    _b("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False),
    _b(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterrolebindings",
        "ClusterRoleBinding",
        namespaced=False,
    ),
)

# Group order as kube-apiserver lists them in /apis (kubectl prefers earlier groups when a
# short name or kind is ambiguous, e.g. "events" resolves to core/v1 first).
GROUP_ORDER = (
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
)


class Registry:
    """Thread-safe map of resource keys to types; CRDs add and remove entries."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._types: dict[str, ResourceType] = {t.key: t for t in BUILTINS}
        self.generation = 0  # bumped on every change, so discovery caches can notice

    def get(self, key: str) -> ResourceType | None:
        return self._types.get(key)

    def all(self) -> list[ResourceType]:
        with self._lock:
            return list(self._types.values())

    def add(self, rt: ResourceType) -> None:
        with self._lock:
            self._types[rt.key] = rt
            self.generation += 1

    def remove(self, key: str) -> None:
        with self._lock:
            if key in self._types and self._types[key].crd:
                del self._types[key]
                self.generation += 1

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        rt = self._types.get(f"{plural}.{group}" if group else plural)
        if rt is None or version not in rt.served_versions:
            return None
        return rt

    def groups(self) -> dict[str, list[str]]:
        """group -> served versions (preferred first), in discovery order."""
        out: dict[str, list[str]] = {}
        for rt in self.all():
            if not rt.group:
                continue
            versions = out.setdefault(rt.group, [])
            for v in rt.served_versions:
                if v not in versions:
                    versions.append(v)
        order = {g: i for i, g in enumerate(GROUP_ORDER)}
        return dict(sorted(out.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
