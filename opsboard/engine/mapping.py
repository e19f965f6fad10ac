"""From mirrored changes to reconcile keys (controller-runtime's predicates and handlers).

A primary object maps to itself, but only when something a reconcile acts on changed:
its generation (the spec), labels, annotations or deletion — so a controller's own status
writes never trigger a reconcile (GenerationChangedPredicate, plus label/annotation
changes). An owned object maps to the primary object that controls it, following the
`controller: true` ownerReferences up through the mirror (Pod → ReplicaSet → Deployment →
Memcached), if that controller declares the kind in `owns`; for a kind it also declares in
`owns_spec_only`, only when the change is meaningful in the same sense (a Deployment's
status updates during a rollout wake nobody: its pods' changes do). A FailedCreate Event
about a StatefulSet or DaemonSet maps as if that workload owned it (controllers.refusals).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from controllers.base import EVENT, POD, Body, Controller, Key
from controllers.fields import controlling_ref, deep_get
from controllers.refusals import is_refusal_event
from controllers.registry import primary_owner
from opsboard.engine.expected import ExpectedChildren
from opsboard.mirror.models import KubeObject
from opsboard.mirror.writer import ADDED, DELETED, Change, snapshot

MAX_OWNER_HOPS = 3
Echoes = Callable[[Sequence[Change]], list[bool]]  # which changes are a run's own writes


def is_meaningful(change: Change, *, owned: bool = False) -> bool:
    """Whether a change of a primary object (or, `owned`, of an owned kind in
    `owns_spec_only`) deserves a reconcile."""
    if change.type in (ADDED, DELETED) or change.previous is None:
        return True
    before, after = change.previous, snapshot(change.body)
    annotations = _not_reserved if owned else dict
    return (
        before.generation != after.generation
        or before.labels != after.labels
        or annotations(before.annotations) != annotations(after.annotations)
        or before.deleting != after.deleting
        or (owned and _refusing_pods(change.body))
    )


def _refusing_pods(body: Body) -> bool:
    """A Deployment whose pods the API server refuses (a quota): the one status of it its
    CR's Degraded is told from, and no pod event would tell (no pod is created). Its end is
    noticed by the CR's own recheck (controllers.apply.settle)."""
    conditions = deep_get(body, "status.conditions") or []
    return any(c.get("type") == "ReplicaFailure" and c.get("status") == "True" for c in conditions)


def _refused_workload(change: Change) -> dict[str, Any] | None:
    """A FailedCreate Event about a StatefulSet or DaemonSet maps as if that workload owned
    it: a refused pod (a quota) is told only so, and no pod's event would tell (none is
    created). Its end is a pod created, whose event does."""
    if change.kind != EVENT or change.type == DELETED or not is_refusal_event(change.body):
        return None
    involved = change.body.get("involvedObject") or {}
    return involved if involved.get("uid") else None


def _not_reserved(annotations: dict[str, str]) -> dict[str, str]:
    """An owned object's annotations but those of Kubernetes' own prefixes (k8s.io,
    kubernetes.io and their subdomains): the Deployment controller's revision, set just
    after we create one, woke its CR for nothing."""
    return {key: value for key, value in annotations.items() if not _reserved(key)}


def _reserved(key: str) -> bool:
    prefix, slash, _ = key.partition("/")
    return bool(slash) and (
        prefix in ("kubernetes.io", "k8s.io") or prefix.endswith((".kubernetes.io", ".k8s.io"))
    )


def _describe(change: Change) -> str:
    meta = change.body["metadata"]
    return change_detail(change.type, change.kind.kind, meta.get("namespace", ""), meta["name"])


def change_detail(type_: str, kind: str, namespace: str, name: str) -> str:
    """How a run's trigger_detail names the change that queued it: "DELETED Memcached ns/x"."""
    return f"{type_} {kind} {namespace}/{name}"


class OwnerIndex:
    """Who controls each possible owner (its controller ownerReference), kept by one
    watcher's term from batch to batch. Following a Pod up to its CR cost an ORM query per
    hop per batch: a third of the watcher's CPU on a real cluster, where a change is most
    often a batch of its own. The leading watcher writes the mirror and maps every change
    it writes, so `seen` learns each owner as it is mirrored (a ReplicaSet before its
    Pods) and keeps what it holds as current as the mirror; the mirror answers the rest."""

    LIMIT = 50_000  # entries; past it, start again (a bound on memory, not a working set)
    LEAVES = (POD, EVENT)  # kinds that own nothing: not worth an entry

    def __init__(self, controllers: Sequence[Controller]) -> None:
        self._refs: dict[str, dict[str, Any] | None] = {}
        self._primaries = {c.primary for c in controllers}  # never looked up: not learnt

    def seen(self, changes: Sequence[Change]) -> None:
        """Learns from a batch just mirrored."""
        for change in changes:
            meta = change.body["metadata"]
            uid = str(meta.get("uid", ""))
            if change.type == DELETED:
                self._refs.pop(uid, None)
            elif uid in self._refs or (
                change.kind not in self.LEAVES and change.kind not in self._primaries
            ):
                self._store({uid: controlling_ref(meta.get("ownerReferences"))})

    def controller_refs(self, uids: set[str]) -> dict[str, dict[str, Any] | None]:
        """uid → controller ownerReference (None: it has none) of those of `uids` in the
        mirror."""
        if missing := uids - self._refs.keys():
            # An owner not mirrored yet stays out: it may be by the next batch.
            rows = KubeObject.objects.filter(uid__in=missing).values_list("uid", "owner_references")
            self._store({str(uid): controlling_ref(refs) for uid, refs in rows})
        return {uid: self._refs[uid] for uid in uids if uid in self._refs}

    def _store(self, refs: dict[str, dict[str, Any] | None]) -> None:
        if len(self._refs) + len(refs) > self.LIMIT:
            self._refs.clear()
        self._refs.update(refs)


def _expected_by_name(change: Change, expected: ExpectedChildren) -> Key | None:
    """The CR that expects this child with no controller by its name, if the change is one
    its controller would act on (as for an owned child: `owns_spec_only`)."""
    found = expected.expecting(change)
    if found is None:
        return None
    controller, key = found
    if change.kind in controller.owns_spec_only and not is_meaningful(change, owned=True):
        return None
    return key


def _without_echoes(mapped: list[tuple[Change, Key]], echoes: Echoes) -> list[tuple[Change, Key]]:
    candidates = [change for change, _ in mapped if change.type != DELETED]
    if not candidates:
        return mapped
    own = {id(change) for change, echo in zip(candidates, echoes(candidates), strict=True) if echo}
    return [(change, key) for change, key in mapped if id(change) not in own]


def keys_for(
    changes: Sequence[Change],
    controllers: Sequence[Controller],
    owners: OwnerIndex | None = None,
    echoes: Echoes | None = None,
    unowned: list[Change] | None = None,
    expected: ExpectedChildren | None = None,
) -> list[tuple[Key, str]]:
    """The keys to reconcile for a batch of changes, each once, with the first reason.
    `owners`: the watcher's index, kept across batches (else the mirror is asked).
    `echoes`: tells which children's changes are a run's own writes (opsboard.engine.echoes),
    which wake nobody.
    `expected`: the watcher's index of the children each CR expects by name, which maps a
    change of a child with no controller (someone's object the CR adopts, or cannot) to
    that CR, and learns from the primaries' changes.
    `unowned`: gets the changes whose owner chain stopped at an owner not mirrored yet (a
    pod seen before its ReplicaSet: they come on separate watches), for the caller to map
    again once it may be."""
    owners = owners if owners is not None else OwnerIndex(controllers)
    owners.seen(changes)
    keys: dict[Key, str] = {}
    pending: list[
        tuple[Change, dict[str, Any]]
    ] = []  # owned changes, and the ownerReference to follow
    for change in changes:
        kind = change.kind
        primary = primary_owner(controllers, kind.api_version, kind.kind)
        meta = change.body["metadata"]
        if primary is not None:
            key = Key(primary.name, meta.get("namespace", ""), meta["name"])
            meaningful = is_meaningful(change)
            if meaningful:
                keys.setdefault(key, _describe(change))
            # Its children's names follow from what a meaningful change changes, if at all.
            if expected is not None and (meaningful or not expected.knows(key)):
                expected.seen(primary, change)
            continue
        ref = controlling_ref(meta.get("ownerReferences")) or _refused_workload(change)
        if ref is not None:
            pending.append((change, ref))
        elif expected is not None and (named := _expected_by_name(change, expected)):
            keys.setdefault(named, _describe(change))

    for hop in range(MAX_OWNER_HOPS):
        if not pending:
            break
        unresolved: list[tuple[Change, dict[str, Any]]] = []
        mapped: list[tuple[Change, Key]] = []
        for change, ref in pending:
            api_version, owner_kind = ref.get("apiVersion", ""), ref.get("kind", "")
            controller = primary_owner(controllers, api_version, owner_kind)
            if controller is None:
                unresolved.append((change, ref))
            elif (change.kind in controller.owns or change.kind == EVENT) and (
                change.kind not in controller.owns_spec_only or is_meaningful(change, owned=True)
            ):
                namespace = change.body["metadata"].get("namespace", "")
                mapped.append((change, Key(controller.name, namespace, ref["name"])))
        if hop == 0 and echoes is not None:  # the primary's own children: a run's writes?
            mapped = _without_echoes(mapped, echoes)
        for change, key in mapped:
            keys.setdefault(key, _describe(change))
        # The owners' own ownerReferences, for the whole batch at once.
        found = owners.controller_refs({str(ref["uid"]) for _, ref in unresolved if ref.get("uid")})
        pending = []
        for change, ref in unresolved:
            uid = str(ref.get("uid", ""))
            if (parent := found.get(uid)) is not None:
                pending.append((change, parent))
            elif uid not in found and unowned is not None and change.type != DELETED:
                unowned.append(change)
    return list(keys.items())
