"""Reads of the mirror for the UI: indexed queries only, no API calls, no N+1."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.core.paginator import Page, Paginator
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from controllers.base import NODE, Body, Kind
from controllers.pods import pod_claims
from opsboard.mirror.models import (
    BODY_COPIES,
    STALE,
    KindWatch,
    KubeObject,
    WatcherHeartbeat,
    body_copies,
)

SORTS = {
    "name": ("name", "namespace"),
    "-name": ("-name", "-namespace"),
    "namespace": ("namespace", "name"),
    "-namespace": ("-namespace", "-name"),
    "age": ("-created_at", "name"),
    "-age": ("created_at", "name"),
    "health": ("health", "name"),
    "-health": ("-health", "name"),
}
# "app=web" or "app=web,tier=cache": a label search; anything else matches names.
_LABEL_TERM = re.compile(r"^\s*([\w./-]+)\s*=\s*([\w.-]*)\s*$")
_TREE_DEPTH = 4  # CR → Deployment → ReplicaSet → Pod
_NODE = {"api_version": NODE.api_version, "kind": NODE.kind}


def objects_of(kind: Kind) -> QuerySet[KubeObject]:
    return KubeObject.objects.filter(api_version=kind.api_version, kind=kind.kind)


def _label_filter(search: str) -> Q | None:
    terms = [_LABEL_TERM.match(term) for term in search.split(",")]
    if not terms or not all(terms):
        return None
    query = Q()
    for match in terms:
        assert match is not None
        query &= Q(**{f"labels__{match.group(1)}": match.group(2)})
    return query


def cr_list(
    *,
    kind: Kind,
    namespace: str = "",
    health: str = "",
    search: str = "",
    stale: bool = False,
    sort: str = "name",
    page: int = 1,
    per_page: int = 50,
) -> Page[KubeObject]:
    """One page of the objects of a kind, filtered; `sort` is a key of SORTS."""
    objects = objects_of(kind).filter(deleted_at__isnull=True)
    if namespace:
        objects = objects.filter(namespace=namespace)
    if health:
        objects = objects.filter(health=health)
    if stale:
        objects = objects.filter(STALE)
    if search:
        by_labels = _label_filter(search)
        objects = objects.filter(by_labels if by_labels is not None else Q(name__icontains=search))
    objects = objects.order_by(*SORTS.get(sort, SORTS["name"])).defer("body")
    return Paginator(objects, per_page).get_page(page)


def cr_get(*, kind: Kind, namespace: str, name: str) -> KubeObject | None:
    return objects_of(kind).filter(namespace=namespace, name=name).first()


def cr_namespaces(*, kind: Kind) -> list[str]:
    return list(
        objects_of(kind).order_by("namespace").values_list("namespace", flat=True).distinct()
    )


def cr_health_counts(*, kind: Kind) -> dict[str, int]:
    """{"Available": n, "Progressing": n, "Degraded": n, "Unknown": n, "stale": n, "total": n}."""
    objects = objects_of(kind).filter(deleted_at__isnull=True)
    counts = {"Available": 0, "Progressing": 0, "Degraded": 0, "Unknown": 0}
    for row in objects.values("health").annotate(n=Count("id")):
        counts[row["health"]] = row["n"]
    counts["stale"] = objects.filter(STALE).count()
    counts["total"] = sum(counts[h] for h in ("Available", "Progressing", "Degraded", "Unknown"))
    return counts


@dataclass
class OwnerNode:
    obj: KubeObject
    children: list[OwnerNode] = field(default_factory=list)

    def walk(self) -> list[KubeObject]:
        return [self.obj, *(o for child in self.children for o in child.walk())]


def _decoding_body_once(objects: QuerySet[KubeObject]) -> Iterator[KubeObject]:
    """The objects, with the columns that copy parts of `body` filled from it: the owner
    tree's bodies are read anyway (the diagnosis), and a hundred pods decoded twice cost
    more than the rest of the tree's reads."""
    for obj in objects.defer(*BODY_COPIES):
        for name, value in body_copies(obj.body).items():
            setattr(obj, name, value)
        yield obj


def owner_tree(*, root: KubeObject, max_depth: int = _TREE_DEPTH) -> OwnerNode:
    """The objects that `root` controls, transitively, one query per level of the tree; and
    under each pod the claims it mounts, one query more."""
    tree = OwnerNode(root)
    level = {root.uid: tree}
    pods: list[OwnerNode] = []
    for _ in range(max_depth):
        children = (
            KubeObject.objects.filter(owner_uid__in=list(level))
            .exclude(kind="Event")  # Events hang off involvedObject, not ownership
            .order_by("kind", "name")
        )
        next_level: dict[str, OwnerNode] = {}
        for child in _decoding_body_once(children):
            node = OwnerNode(child)
            level[child.owner_uid].children.append(node)
            next_level[child.uid] = node
            if child.kind == "Pod":
                pods.append(node)
        if not next_level:
            break
        level = next_level
    _add_mounted_claims(pods)
    return tree


def _add_mounted_claims(pods: list[OwnerNode]) -> None:
    """Under each pod, the claims it mounts, in one query: a StatefulSet's claims have no
    owner, so ownership alone does not reach them."""
    wanted = {(pod.obj.namespace, name) for pod in pods for name in pod_claims(pod.obj.body)}
    if not wanted:
        return
    found = KubeObject.objects.filter(
        kind="PersistentVolumeClaim",
        namespace__in={ns for ns, _ in wanted},
        name__in={name for _, name in wanted},
    )
    claims = {(c.namespace, c.name): c for c in _decoding_body_once(found)}
    for pod in pods:
        for name in pod_claims(pod.obj.body):
            if (claim := claims.get((pod.obj.namespace, name))) is not None:
                pod.children.append(OwnerNode(claim))


def claim_classes(*, namespace: str, names: Iterable[str]) -> dict[str, str]:
    """{claim name: its storageClassName} of the mirrored claims named ("" for a claim that
    names none); a claim not mirrored is left out."""
    found = KubeObject.objects.filter(
        kind="PersistentVolumeClaim", namespace=namespace, name__in=set(names)
    ).values_list("name", "spec")
    return {name: str((spec or {}).get("storageClassName") or "") for name, spec in found}


def _selects(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def service_pods(*, service: KubeObject) -> list[KubeObject]:
    """The pods a Service selects (same namespace, every selector label matching)."""
    selector = (service.spec or {}).get("selector") or {}
    if not selector:
        return []  # a Service without a selector selects nothing
    pods = KubeObject.objects.filter(kind="Pod", api_version="v1", namespace=service.namespace)
    pods = pods.filter(**{f"labels__{key}": value for key, value in selector.items()})
    return [pod for pod in pods.order_by("name") if _selects(selector, pod.labels)]


def nodes() -> list[Body] | None:
    """The cluster's mirrored Nodes; None while the watcher has not listed them (it may not
    be allowed to: k8s/rbac/role.yaml grants it)."""
    if not KindWatch.objects.filter(**_NODE, listed_at__isnull=False).exists():
        return None
    rows = KubeObject.objects.filter(**_NODE, deleted_at__isnull=True).order_by("name")
    return [row.body for row in rows.only("body")]


def object_events(*, uid: str, limit: int = 50) -> list[KubeObject]:
    """Kubernetes Events about an object, newest first (mirrored with owner_uid = involvedObject)."""
    events = KubeObject.objects.filter(kind="Event", owner_uid=uid)
    return list(events.order_by("-mirrored_at")[:limit])


@dataclass(frozen=True)
class Freshness:
    """How current the mirror is, and whether a watcher is keeping it so."""

    last_event_at: datetime | None
    heartbeat_at: datetime | None
    leader: str  # identity of the leading watcher, "" if none
    standbys: int
    watcher_up: bool
    kinds: dict[str, str]  # kind → resourceVersion the watcher has reached
    # Why a live standby could not take the Lease at its last attempt, while none leads
    # (the API server unreachable, say); "" if none said.
    lease_error: str = ""

    @property
    def age(self) -> timedelta | None:
        return timezone.now() - self.last_event_at if self.last_event_at else None


def mirror_freshness(*, heartbeat_timeout: float = 30.0) -> Freshness:
    """The watcher counts as up while its heartbeat is younger than `heartbeat_timeout` s."""
    cutoff = timezone.now() - timedelta(seconds=heartbeat_timeout)
    watchers = list(WatcherHeartbeat.objects.filter(heartbeat_at__gte=cutoff))
    watchers.sort(key=lambda w: w.heartbeat_at, reverse=True)  # the freshest one's lease_error
    leader = next((w for w in watchers if w.is_leader), None)
    watches = list(KindWatch.objects.order_by("kind"))  # one row per kind: a few
    return Freshness(
        last_event_at=max((w.last_event_at for w in watches if w.last_event_at), default=None),
        heartbeat_at=leader.heartbeat_at if leader else None,
        leader=leader.identity if leader else "",
        standbys=sum(1 for w in watchers if not w.is_leader),
        watcher_up=leader is not None,
        kinds={w.kind: w.resource_version for w in watches},
        lease_error="" if leader else next((w.lease_error for w in watchers if w.lease_error), ""),
    )
