"""Fills `findings.Observed` for one CR from the mirror, the run log, the audit and the
engine's Redis state, then diagnoses it. No Kubernetes API call: the mirror answers.

A handful of indexed queries and one Redis round trip per CR, whatever its pod count.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import redis
from django.conf import settings
from django.db.models import Case, Q, When
from django.utils import timezone

from controllers.base import Body, Key
from controllers.fields import deep_get
from controllers.pods import unschedulable
from controllers.refusals import short_of_pods
from controllers.unready import lost_pods
from controllers.wording import count
from opsboard.audit.models import AuditEntry
from opsboard.dashboard.kinds import KindInfo, all_kinds, value_at
from opsboard.dashboard.selectors import needing_attention
from opsboard.diagnosis.errors import PORT_TAKEN
from opsboard.diagnosis.findings import diagnose
from opsboard.diagnosis.observed import EngineState, Finding, ImageChange, LastRun, Observed
from opsboard.engine.models import ReconcileRun
from opsboard.engine.pump import workers_alive
from opsboard.engine.queue import Why, queue_for
from opsboard.mirror import selectors as mirror
from opsboard.mirror.models import KubeObject, WatcherHeartbeat

log = logging.getLogger(__name__)
_IMAGE_CHANGES = 20  # the newest applied patches looked at to say who set an image


@dataclass(frozen=True)
class Diagnosis:
    findings: list[Finding]
    healthy: bool
    summary: str  # one line: "Healthy: ..." or the first finding's what


def _from_ms(value: bytes | str | float | None) -> datetime | None:
    return datetime.fromtimestamp(float(value) / 1000, UTC) if value else None


def engine_wide(freshness: mirror.Freshness | None = None) -> EngineState:
    """What every CR's diagnosis shares: the watcher leading, the live workers. `freshness`:
    the mirror's, if the caller has read it already (a page's banner shows it too)."""
    freshness = freshness or mirror.mirror_freshness()
    last = WatcherHeartbeat.objects.order_by("-heartbeat_at").first()
    base = EngineState(
        watcher_leader=freshness.leader,
        last_watcher=last.identity if last else "",
        last_watcher_at=last.heartbeat_at if last else None,
        standbys=freshness.standbys,
        lease_error=freshness.lease_error,
        stale_after=settings.OPSBOARD_QUEUE_STALE_SECONDS,
        temporary_backoff_max=settings.OPSBOARD_BACKOFF_TEMPORARY_MAX,
    )
    try:
        return replace(base, workers=tuple(workers_alive()))
    except redis.RedisError:
        return replace(base, redis_up=False)


def _engine_state(key: Key, base: EngineState) -> EngineState:
    """The key's place in the engine (queued, running, backoff) beside the engine's health."""
    if not base.redis_up:
        return base
    queue = queue_for(key.controller)
    field = str(key)
    try:
        pipe = queue.client.pipeline(transaction=False)
        pipe.hget(queue.fails, field)
        pipe.zscore(queue.delayed, field)
        pipe.hexists(queue.permanent, field)
        pipe.hget(queue.queued, field)
        pipe.hget(queue.running, field)
        fails, due, permanent, queued, running = pipe.execute()
    except redis.RedisError:
        log.warning("Redis unavailable while diagnosing %s", key, exc_info=True)
        return replace(base, redis_up=False)
    return replace(
        base,
        failures=int(fails or 0),
        next_retry_at=_from_ms(due),
        permanent=bool(permanent),
        queued_since=datetime.fromtimestamp(Why.load(queued).at, UTC) if queued else None,
        running_since=_from_ms(running),
    )


def _image_changes(info: KindInfo, cr: KubeObject) -> list[ImageChange]:
    fields = info.controller.fields
    paths = [p for p in (fields.image, *dict(fields.images).values()) if p]
    if not paths or not cr.uid:
        return []
    entries = AuditEntry.objects.filter(
        uid=cr.uid, action=AuditEntry.Action.PATCH, result=AuditEntry.Result.APPLIED
    ).order_by("-at")[:_IMAGE_CHANGES]
    return [
        ImageChange(e.pk, str(e.after[path]), e.username, e.at)
        for e in entries
        for path in paths
        if e.after.get(path)
    ]


def _refusals(children: list[Body]) -> list[Body]:
    """The FailedCreate Events about the StatefulSets and DaemonSets short of pods: a
    query only when one is (the watcher mirrors those Events for this)."""
    short = [deep_get(c, "metadata.uid") for c in children if short_of_pods(c)]
    if not short:
        return []
    events = KubeObject.objects.filter(kind="Event", owner_uid__in=short).only("body")
    return [e.body for e in events if e.body.get("reason") == "FailedCreate"]


def _nodes(children: list[Body], read: Callable[[], list[Body] | None]) -> list[Body] | None:
    """The mirrored Nodes, read only when a finding may name some: a pod waits for a node
    or is on one that stopped reporting, or a DaemonSet selects none (a cluster may have
    thousands)."""
    pods = [c for c in children if c.get("kind") == "Pod"]
    if (
        unschedulable(pods)
        or lost_pods(pods)
        or any(
            c.get("kind") == "DaemonSet" and deep_get(c, "status.desiredNumberScheduled") == 0
            for c in children
        )
    ):
        return read()
    return None


def _port_users(error: str, seen: frozenset[str] | None) -> dict[int, str]:
    """The mirrored Service that holds the NodePort `error` says is taken: NodePorts are
    cluster-wide, so every Service is read, but only when a run was refused one. It is
    named only to a person who sees its namespace (`seen`, None: every one)."""
    taken = PORT_TAKEN.search(error)
    if taken is None:
        return {}
    port = int(taken["port"])
    for row in KubeObject.objects.filter(kind="Service", api_version="v1").only(
        "namespace", "name", "spec"
    ):
        if any(p.get("nodePort") == port for p in row.spec.get("ports") or []):
            if seen is not None and row.namespace not in seen:
                return {port: "a Service in a namespace where you have no role"}
            return {port: f"Service {row.namespace}/{row.name}"}
    return {}


def cr_diagnosis(
    *,
    info: KindInfo,
    cr: KubeObject,
    tree: mirror.OwnerNode | None = None,
    engine: EngineState | None = None,
    read_nodes: Callable[[], list[Body] | None] = mirror.nodes,
    seen: frozenset[str] | None = None,
) -> Diagnosis:
    """The findings for one CR; pass the owner tree and `engine_wide()` if the caller has
    read them already, and a `read_nodes` that reads them once (the overview diagnoses
    many CRs). `seen`: the namespaces the reader holds a role in (Access.namespaces; None:
    every one). What belongs to none of them is not named to them: Nodes, which belong to
    no namespace, only to a reader with a global role (as login lockouts are); the
    findings then say what the scheduler's and the pods' own words say."""
    tree = tree or mirror.owner_tree(root=cr)
    children = tree.walk()[1:]
    present = {(c.kind, c.name) for c in (node.obj for node in tree.children)}
    missing = [
        (e.kind.kind, e.name)
        for e in info.controller.expected_children(cr.body)
        if (e.kind.kind, e.name) not in present
    ]
    foreign: list[Body] = []
    unowned: list[Body] = []
    if missing:
        rows = KubeObject.objects.filter(
            namespace=cr.namespace,
            kind__in={k for k, _ in missing},
            name__in={n for _, n in missing},
        ).exclude(owner_uid=cr.uid)
        there = [r for r in rows if (r.kind, r.name) in set(missing)]
        # Another owner's is in the way; one with no owner (kubectl's) is adopted, or why not.
        foreign = [r.body for r in there if r.owner_uid]
        unowned = [r.body for r in there if not r.owner_uid]
    run = (
        ReconcileRun.objects.filter(controller=info.name, namespace=cr.namespace, name=cr.name)
        .order_by("-started_at")
        .only("outcome", "error", "started_at")
        .first()
    )
    observed = Observed(
        cr=cr.body,
        refusals=_refusals([c.body for c in children]),
        nodes=_nodes([c.body for c in children], read_nodes) if seen is None else None,
        node_rights=seen is None,
        # Once each: a claim two pods mount stands under both in the tree.
        objects=list({c.uid: c.body for c in children}.values()),
        objects_changed_at={c.uid: c.mirrored_at for c in children},
        missing=missing,
        foreign=foreign,
        unowned=unowned,
        port_users=_port_users(run.error if run else "", seen),
        changed_at=cr.mirrored_at,
        fields=info.controller.fields,
        image_changes=_image_changes(info, cr),
        last_run=LastRun(run.outcome, run.error, run.started_at) if run else None,
        engine=_engine_state(Key(info.name, cr.namespace, cr.name), engine or engine_wide()),
        running_controllers=tuple(i.kind.group for i in all_kinds().values()),
        operator_role=settings.OPSBOARD_OPERATOR_CLUSTER_ROLE,
        now=timezone.now(),
        unready_grace=settings.OPSBOARD_UNREADY_GRACE_SECONDS,
    )
    findings = diagnose(observed)
    # Only what stops convergence counts against "healthy"; a stale status alone is news.
    healthy = cr.health == "Available" and not cr.is_stale and not findings
    if healthy:
        summary = (
            f"Healthy: Available{_ready_counts(info, cr)}, generation {cr.generation} observed."
        )
    elif findings:
        summary = findings[0].what
    else:
        conditions = deep_get(cr.body, "status.conditions", []) or []
        progressing: dict[str, Any] = next(
            (c for c in conditions if c.get("type") == "Progressing"), {}
        )
        summary = (
            f"{cr.health}: {progressing.get('message') or 'no problem found'}; "
            "nothing stands in the way yet."
        )
    return Diagnosis(findings=findings, healthy=healthy, summary=summary)


def _ready_counts(info: KindInfo, cr: KubeObject) -> str:
    """ ", 4/4 ready": never more ready than wanted. Just after a scale-down (or during a
    surge) the pods the Deployment is about to remove are still ready, and counted: the
    Deployment's own readyReplicas says 5 for 4 replicas then too, until the ReplicaSet
    marks them terminating. They are said apart, as on their way out."""
    if not (info.ready_path and info.desired_path):
        return ""
    ready = value_at(cr.body, info.ready_path) or 0
    wanted = value_at(cr.body, info.desired_path)
    if not isinstance(ready, int) or not isinstance(wanted, int) or ready <= wanted:
        return f", {ready}/{wanted} ready"
    surplus = ready - wanted
    return f", {wanted}/{wanted} ready ({count(surplus, 'more pod')} being removed)"


@dataclass(frozen=True)
class Attention:
    info: KindInfo
    cr: KubeObject
    diagnosis: Diagnosis


def needs_attention(
    *,
    kinds: list[KindInfo],
    scope: Q,
    seen: frozenset[str] | None = None,
    freshness: mirror.Freshness | None = None,
    limit: int = 10,
) -> tuple[list[Attention], int]:
    """The CRs that need attention (dashboard.selectors.needing_attention), each with its
    diagnosis (Degraded first, then the longest waiting); and how many there are in all.
    `scope`, `seen`: the namespaces the person may see, as a filter and a set
    (opsboard.accounts.access.Access.scope, .namespaces); `freshness` as for engine_wide."""
    by_kind = {(i.kind.api_version, i.kind.kind): i for i in kinds}
    unsettled = KubeObject.objects.filter(needing_attention(kinds), scope)
    total = unsettled.count()
    if not total:  # a converged fleet, the usual case: no rows to read, nothing to diagnose
        return [], 0
    rows = unsettled.order_by(
        Case(When(health="Degraded", then=0), default=1), "created_at", "name"
    )[:limit]
    engine = engine_wide(freshness)
    nodes = functools.cache(mirror.nodes)  # a cluster's thousands, read once if at all
    found = []
    for cr in rows:
        info = by_kind[(cr.api_version, cr.kind)]
        diagnosis = cr_diagnosis(info=info, cr=cr, engine=engine, read_nodes=nodes, seen=seen)
        found.append(Attention(info, cr, diagnosis))
    return found, total
