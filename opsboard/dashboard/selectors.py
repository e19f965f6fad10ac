"""Reads for the dashboard, served from the mirror and the reconcile log only.

Each selector runs a fixed, small number of indexed queries whatever the number of
objects (no N+1), so pages stay fast at tens of thousands of CRs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery

from controllers.base import Body
from controllers.conditions import parse_time
from controllers.refusals import event_stamp
from controllers.wording import count
from opsboard.dashboard.kinds import KindInfo, value_at
from opsboard.engine.models import ReconcileRun
from opsboard.mirror import selectors as mirror
from opsboard.mirror.models import STALE, KubeObject

HEALTHS = ("Available", "Progressing", "Degraded", "Unknown")
ATTENTION = "attention"  # the health filter's choice for what the overview lists
SORTS = {
    "name": ("name", "namespace"),
    "namespace": ("namespace", "name"),
    "age": ("-created_at", "name"),
    "health": ("health", "name"),
    "kind": ("kind", "name"),
}
_NEVER = datetime.min.replace(tzinfo=UTC)  # an Event with no time at all sorts last
_LABEL_KEY = re.compile(r"[A-Za-z0-9][\w./-]{0,252}")
# Enough for the table; `body` and annotations are large and only the detail page needs them.
LIST_FIELDS = (
    "id", "api_version", "kind", "namespace", "name", "uid", "generation",
    "observed_generation", "labels", "spec", "status", "health", "created_at", "deleted_at",
)  # fmt: skip


def _kind_filter(kinds: list[KindInfo]) -> Q:
    q = Q(pk__in=[])
    for info in kinds:
        q |= Q(api_version=info.kind.api_version, kind=info.kind.kind)
    return q


def _search_filter(text: str) -> Q:
    """`key=value` matches a label; anything else a part of the name."""
    key, sep, value = (part.strip() for part in text.partition("="))
    # A label key never holds "__", which Django would read as a lookup ("app__in").
    if sep and _LABEL_KEY.fullmatch(key) and "__" not in key:
        return Q(**{f"labels__{key}": value})
    return Q(name__icontains=text)


def needing_attention(kinds: list[KindInfo]) -> Q:
    """The CRs not Available and settled, or being deleted: the overview's *Needs attention*.
    A generic kind's (no operator of ours: its status may say nothing of availability) only
    when Degraded."""
    unsettled_of_ours = ~Q(health="Available") | STALE | Q(deleted_at__isnull=False)
    query = Q(pk__in=[])
    for info in kinds:
        of_kind = Q(api_version=info.kind.api_version, kind=info.kind.kind)
        query |= of_kind & (Q(health="Degraded") if info.generic else unsettled_of_ours)
    return query


def cr_queryset(
    *, kinds: list[KindInfo], scope: Q, namespace: str = "", health: str = "", search: str = ""
) -> QuerySet[KubeObject]:
    """`scope`: the namespaces the person may see (opsboard.accounts.access.Access.scope)."""
    qs = KubeObject.objects.filter(_kind_filter(kinds), scope)
    if namespace:
        qs = qs.filter(namespace=namespace)
    if health == ATTENTION:
        qs = qs.filter(needing_attention(kinds))
    elif health == "stale":
        qs = qs.filter(STALE)
    elif health in HEALTHS:
        qs = qs.filter(health=health)
    if search.strip():
        qs = qs.filter(_search_filter(search.strip()))
    return qs


@dataclass
class CrRow:
    """A row of the CR list: the mirrored CR and what the table shows beside it."""

    cr: KubeObject
    info: KindInfo
    view: Body  # what printer columns and paths refer to
    desired: Any = None
    ready: Any = 0
    image: Any = None
    last_outcome: str = ""


def cr_page(
    *,
    kinds: list[KindInfo],
    scope: Q,
    namespace: str = "",
    health: str = "",
    search: str = "",
    sort: str = "name",
    page: int | str = 1,
    per_page: int = 50,
) -> Page[Any]:
    """One page of CRs as CrRows: each with its kind, desired/ready, image, last outcome."""
    desc, key = sort.startswith("-"), sort.lstrip("-")
    column = kinds[0].column_order(key) if len(kinds) == 1 else None
    order: tuple[str, ...] = (column, "name") if column else SORTS.get(key, SORTS["name"])
    if desc:
        order = tuple(o[1:] if o.startswith("-") else f"-{o}" for o in order)
    qs = cr_queryset(kinds=kinds, scope=scope, namespace=namespace, health=health, search=search)
    paginator = Paginator(qs.only(*LIST_FIELDS).order_by(*order, "id"), per_page)
    result: Page[Any] = paginator.get_page(page)
    result.object_list = _rows(list(result.object_list), kinds)
    return result


def view_body(obj: KubeObject) -> Body:
    """The parts of the object that printer columns and paths refer to, without `body`."""
    metadata = {"name": obj.name, "namespace": obj.namespace, "labels": obj.labels}
    metadata["generation"] = obj.generation
    return {"metadata": metadata, "spec": obj.spec or {}, "status": obj.status or {}}


def _rows(objects: list[KubeObject], kinds: list[KindInfo]) -> list[CrRow]:
    """Each CR with its kind, paths and latest reconcile outcome: one query per kind."""
    info_of = {(i.kind.api_version, i.kind.kind): i for i in kinds}
    rows: list[CrRow] = []
    by_controller: dict[str, list[int]] = {}
    for obj in objects:
        info = info_of[(obj.api_version, obj.kind)]
        view = view_body(obj)
        rows.append(
            CrRow(
                obj,
                info,
                view,
                desired=value_at(view, info.desired_path),
                ready=value_at(view, info.ready_path) or 0,
                image=value_at(view, info.controller.fields.image),
            )
        )
        by_controller.setdefault(info.name, []).append(obj.pk)
    outcomes: dict[int, str] = {}
    for controller, pks in by_controller.items():
        latest = ReconcileRun.objects.filter(
            controller=controller, namespace=OuterRef("namespace"), name=OuterRef("name")
        ).order_by("-started_at")
        found = KubeObject.objects.filter(pk__in=pks).annotate(
            outcome=Subquery(latest.values("outcome")[:1])
        )
        outcomes.update(found.values_list("pk", "outcome"))
    for row in rows:
        row.last_outcome = outcomes.get(row.cr.pk) or ""
    return rows


@dataclass
class KindCounts:
    info: KindInfo
    total: int = 0
    stale: int = 0
    by_health: dict[str, int] = field(default_factory=lambda: dict.fromkeys(HEALTHS, 0))


def kind_counts(*, kinds: list[KindInfo], scope: Q) -> list[KindCounts]:
    """Per kind: how many CRs are in each health, and how many are stale. One query."""
    counts = {(i.kind.api_version, i.kind.kind): KindCounts(info=i) for i in kinds}
    rows = (
        KubeObject.objects.filter(_kind_filter(kinds), scope)
        .values("api_version", "kind", "health")
        .annotate(n=Count("id"), stale=Count("id", filter=STALE))
    )
    for row in rows:
        entry = counts[(row["api_version"], row["kind"])]
        entry.by_health[row["health"]] = entry.by_health.get(row["health"], 0) + row["n"]
        entry.total += row["n"]
        entry.stale += row["stale"]
    return list(counts.values())


def namespaces(*, kinds: list[KindInfo], scope: Q) -> list[str]:
    qs = KubeObject.objects.filter(_kind_filter(kinds), scope).values_list("namespace", flat=True)
    return sorted(set(qs.distinct()))


def cr_runs(*, info: KindInfo, namespace: str, name: str, limit: int = 20) -> list[ReconcileRun]:
    return list(
        ReconcileRun.objects.filter(controller=info.name, namespace=namespace, name=name).order_by(
            "-started_at"
        )[:limit]
    )


def cr_events(*, cr: KubeObject, limit: int = 30) -> list[dict[str, Any]]:
    """Events about the CR, newest first, as the table shows them."""
    events = [
        {
            "type": e.get("type", ""),
            "reason": e.get("reason", ""),
            "message": e.get("message", ""),
            "count": e.get("count") or (e.get("series") or {}).get("count") or 1,
            "last_seen": event_stamp(e),
        }
        for e in (row.body for row in mirror.object_events(uid=cr.uid, limit=limit))
    ]
    # By time, not text: a MicroTime's fraction sorts "12:00:00.5Z" before "12:00:00Z".
    return sorted(events, key=lambda e: parse_time(e["last_seen"]) or _NEVER, reverse=True)


@dataclass
class TreeNode:
    kind: str
    name: str
    obj: KubeObject | None = None  # None: an expected child that is missing
    health: str = "ok"  # "ok", "progressing", "failed", "missing"
    detail: str = ""
    children: list[TreeNode] = field(default_factory=list)


def _node_health(obj: KubeObject) -> tuple[str, str]:
    """(health, one-line detail) of a child object, from its mirrored status."""
    status, spec = obj.status or {}, obj.spec or {}
    if obj.deleted_at:
        return "progressing", "terminating"
    if obj.kind == "Pod":
        health = {"Available": "ok", "Degraded": "failed"}.get(obj.health, "progressing")
        return health, status.get("phase", "Pending")
    if obj.kind in ("Deployment", "ReplicaSet", "StatefulSet"):
        want, ready = spec.get("replicas", 1), status.get("readyReplicas", 0) or 0
        return ("ok" if ready >= want else "progressing"), f"{ready}/{want} ready"
    if obj.kind == "PersistentVolumeClaim":
        return _claim_health(status, spec)
    if obj.kind == "DaemonSet":  # one pod per selected node: none selected is no success
        want, ready = status.get("desiredNumberScheduled", 0), status.get("numberReady", 0)
        if not want:
            return "progressing", "on no node"
        return ("ok" if ready >= want else "progressing"), f"{ready}/{want} ready"
    return "ok", ""


def _claim_health(status: Body, spec: Body) -> tuple[str, str]:
    phase = status.get("phase", "Pending")
    has = (status.get("capacity") or {}).get("storage")
    wants = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    if phase != "Bound":
        return ("failed" if phase == "Lost" else "progressing"), phase
    if wants and has and wants != has:
        return "progressing", f"Bound, {has} growing to {wants}"
    return "ok", f"Bound, {has or wants or '?'}"


def _tree_node(owner_node: mirror.OwnerNode) -> TreeNode:
    obj = owner_node.obj
    health, detail = _node_health(obj)
    children = [_tree_node(child) for child in owner_node.children]
    if obj.kind == "Service":
        children = [_tree_node(mirror.OwnerNode(p)) for p in mirror.service_pods(service=obj)]
        detail = f"selects {count(len(children), 'pod')}"
    return TreeNode(obj.kind, obj.name, obj, health, detail, children)


def owner_tree(
    *, info: KindInfo, cr: KubeObject, mirrored: mirror.OwnerNode | None = None
) -> TreeNode:
    """CR → owned objects (→ ReplicaSets → Pods), Services → the pods they select, each
    with its health; expected children that are missing appear as "missing" nodes.
    `mirrored`: the mirror's owner tree, if the caller has read it already."""
    root = _tree_node(mirrored or mirror.owner_tree(root=cr))
    root.health, root.detail = "ok", ""
    present = {(n.kind, n.name) for n in root.children}
    absent = [
        e
        for e in info.controller.expected_children(cr.body)
        if (e.kind.kind, e.name) not in present
    ]
    # Not in the tree is not gone: one of that name may exist that this CR does not control
    # (kubectl's, not adopted yet or not adoptable, or another CR's).
    elsewhere = (
        {
            (o.kind, o.name): o
            for o in KubeObject.objects.filter(
                namespace=cr.namespace,
                kind__in={e.kind.kind for e in absent},
                name__in={e.name for e in absent},
            )
        }
        if absent
        else {}
    )
    for expected in absent:
        kind = expected.kind.kind
        if (found := elsewhere.get((kind, expected.name))) is not None:
            node = TreeNode(kind, expected.name, found, "failed", _not_ours(found, cr.kind))
        else:
            # Deleted, or never created: the mirror cannot tell which.
            detail = "not there: the next reconcile creates it; if it does not, see the Diagnosis"
            node = TreeNode(kind, expected.name, health="missing", detail=detail)
        root.children.append(node)
    return root


def _not_ours(obj: KubeObject, cr_kind: str) -> str:
    if obj.owner_uid:
        return f"exists, controlled by another owner, not by this {cr_kind}: see the Diagnosis"
    return "exists, created outside opsboard (no owner), not adopted yet: see the Diagnosis"


def tree_rows(tree: TreeNode) -> list[tuple[int, TreeNode]]:
    """The tree as (depth, node) rows in display order: a flat loop renders far faster than
    a recursive include when the tree holds hundreds of pods."""
    rows: list[tuple[int, TreeNode]] = []
    stack = [(0, tree)]
    while stack:
        depth, node = stack.pop()
        rows.append((depth, node))
        stack.extend((depth + 1, child) for child in reversed(node.children))
    return rows


def node_states(pods: dict[str, KubeObject]) -> dict[str, str]:
    """What is wrong with the nodes the pods run on, by node name ("NotReady, cordoned"),
    from the mirrored Nodes; a node that is ready and schedulable, or not mirrored, says
    nothing. One query, for the few nodes named."""
    names = {str(p.spec.get("nodeName")) for p in pods.values() if (p.spec or {}).get("nodeName")}
    if not names:
        return {}
    states = {}
    rows = KubeObject.objects.filter(kind="Node", api_version="v1", namespace="", name__in=names)
    for node in rows.only("name", "health", "spec"):
        said = [] if node.health == "Available" else ["NotReady"]
        if (node.spec or {}).get("unschedulable"):
            said.append("cordoned")
        if said:
            states[node.name] = ", ".join(said)
    return states


def tree_pods(tree: TreeNode) -> dict[str, KubeObject]:
    """Every pod in the tree by name, to describe status.nodes without another query."""
    found: dict[str, KubeObject] = {}
    stack = [tree]
    while stack:
        node = stack.pop()
        if node.kind == "Pod" and node.obj is not None:
            found[node.name] = node.obj
        stack.extend(node.children)
    return found
