"""The watcher: lists and watches the registered kinds, keeps the mirror, queues keys.

One thread per watched kind (and namespace) reads its watch stream; a single writer
(the caller's thread) applies what they read to the mirror in batches and only then
queues the keys, so a reconcile always finds the mirror at least as new as the event that
caused it. A watcher killed between the two leaves changes mirrored but not queued: its
successor treats every change newer than the last saved resume point as news, even where
the mirror already has it, and with no resume point, everything its first list shows.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from controllers import trace
from controllers.base import (
    EVENT,
    NODE,
    POD,
    REPLICASET,
    Body,
    Controller,
    Key,
    Kind,
    PermanentError,
    TemporaryError,
)
from controllers.kube import ApiKube, Forbidden, Gone
from controllers.pods import pod_is_ready
from controllers.refusals import TOLD_IN_EVENTS
from controllers.registry import watched_kinds
from opsboard.engine.database import close_if_broken
from opsboard.engine.expected import ExpectedChildren
from opsboard.engine.mapping import Echoes, OwnerIndex, keys_for
from opsboard.engine.outage import Outage
from opsboard.mirror.beats import Heartbeats
from opsboard.mirror.history import spec_versions_record
from opsboard.mirror.writer import (
    Change,
    KindEvents,
    kind_watch_resume_point,
    kind_watches_save,
    mirror_apply,
    mirror_apply_kinds,
    mirror_relist,
)

log = logging.getLogger(__name__)
# Mirrored for the UI (owner trees, an object's Events), to map Pods to their owners, and
# for the Diagnosis to name the nodes that keep pods off (cordoned, tainted, unlabelled).
MIRROR_ONLY = (REPLICASET, EVENT, NODE)
# Workloads that tell a refused pod create (a quota, admission) only in a FailedCreate
# Event, having no ReplicaFailure condition: those Events are mirrored for the operators'
# status and the diagnosis (controllers.refusals).
REFUSALS_TOLD_BY = TOLD_IN_EVENTS
BATCH = 500
# A batch of up to this many watch events, none of them urgent, is mirrored in one write
# (see Watcher._apply).
TOGETHER = 64
INBOX_MAX = 50_000  # items read and not yet taken by the writer (see Watcher._put)
WATCH_TIMEOUT = 300  # seconds per watch request; the server ends it, we resume
# An owned change whose owner is not mirrored yet (a pod's watch ahead of the ReplicaSets')
# is mapped again with each batch for this long: its owner's own change is one of them.
# Else a pod created and made ready in one batch before its ReplicaSet arrived woke nobody
# until the resync. Bounded, for pods whose owner kind no one watches (a Job's).
UNOWNED_WAIT = 10.0  # seconds
UNOWNED_KEPT = 1_000  # changes
READY_GRACE = 0.02  # seconds a ready or deleted pod's batch waits for more (_wait_for)
SAVE_EVERY = 0.5  # seconds between saves of the resume points (Watcher._save_versions)
# Between saves of resume points that only bookmarks and Node heartbeats moved: replaying
# those costs a successor nothing, and saving each cost an idle watcher a write each.
QUIET_SAVE_EVERY = 60.0  # seconds
# Keys wait for every kind's first list, at most this long (see Watcher._holding).
SYNC_WAIT = 30.0  # seconds
# Keys that could not be queued (Redis down) are kept, once each, and sent again from the
# writer's loop, first after UNSENT_RETRY seconds, then doubling up to UNSENT_RETRY_MAX.
# Past UNSENT_KEPT the oldest are dropped and a resync is asked for once Redis answers.
UNSENT_KEPT = 20_000  # keys
UNSENT_RETRY = 0.5  # seconds
UNSENT_RETRY_MAX = 5.0  # seconds


@dataclass(frozen=True)
class Listed:
    kind: Kind
    namespace: str
    items: list[Body]
    resource_version: str


@dataclass(frozen=True)
class Streamed:
    kind: Kind
    type: str  # ADDED, MODIFIED, DELETED, BOOKMARK
    body: Body


def _traced(body: Body) -> str:
    """A primary's change as its trace mark tells it: its namespace/name and generation."""
    meta = body.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')} {meta.get('generation')}"


def _observed(item: Streamed) -> bool:
    """Whether a primary's change leaves its generation observed and deletes nothing: most
    often the operator's own status write, which wakes nobody, two or three per new CR.
    Held like an owned change, they cost the watcher a mirror write per batch instead of
    one each (a run reads its own status write meanwhile: own_status). A label or
    annotation edit of a settled CR waits as long; a spec edit or a deletion never."""
    meta, status = item.body.get("metadata") or {}, item.body.get("status")
    return (
        item.type == "MODIFIED"
        and not meta.get("deletionTimestamp")
        and isinstance(status, dict)
        and meta.get("generation") is not None
        and status.get("observedGeneration") == meta.get("generation")
    )


Enqueue = Callable[..., Any]
EnqueueMany = Callable[[list[tuple[Key, str, str]]], Any]


def _versioned(kinds: Iterable[Kind]) -> frozenset[tuple[str, str]]:
    return frozenset((kind.api_version, kind.kind) for kind in kinds)


_REFUSING = _versioned(REFUSALS_TOLD_BY)


class Watcher:
    def __init__(
        self,
        *,
        kube: ApiKube,
        controllers: Sequence[Controller],
        enqueue: Enqueue,
        enqueue_many: EnqueueMany | None = None,
        echoes: Echoes | None = None,
        namespaces: Sequence[str] = (),
        mirror_only: Sequence[Kind] = (),
        resync: Callable[[], object] | None = None,
    ) -> None:
        self.kube = kube
        self.controllers = list(controllers)
        self.enqueue = enqueue
        self.enqueue_many = enqueue_many  # the batch form of `enqueue`: one round trip
        self.resync = resync  # queues every primary object (after keys were dropped)
        self.echoes = echoes  # which children's changes are runs' own writes (echoes.py)
        self.namespaces = list(namespaces)
        kinds = watched_kinds(self.controllers)
        extra = [*MIRROR_ONLY, *mirror_only]  # e.g. the kinds of OPSBOARD_GENERIC_KINDS
        self.kinds = kinds + [k for k in dict.fromkeys(extra) if k not in kinds]
        # A SimpleQueue: a Queue's locks and conditions, in Python and paid per event, were
        # 6-10 % of the watcher's CPU. Bounded by _put instead.
        self.inbox: queue.SimpleQueue[Listed | Streamed] = queue.SimpleQueue()
        self.stop = threading.Event()
        # Set with `stop` when the lease is lost: a successor may already write, so this
        # watcher's last resume points are not saved on the way out.
        self.deposed = threading.Event()
        self.primaries = {c.primary for c in self.controllers}
        # Owned changes mapped before their owner was mirrored, and since when.
        self._unowned: list[tuple[Change, float]] = []
        # How long a batch of owned objects' changes only waits for more (see settings).
        self.linger = settings.OPSBOARD_OWNED_LINGER_SECONDS
        self.fields = {EVENT: self._events_about_primaries()}  # field selectors, by kind
        self._heartbeats = Heartbeats()  # a kubelet's "still here" is not mirrored
        self._primary_versions = _versioned(self.primaries)
        # This term's: a successor may have seen other changes.
        self.owners = OwnerIndex(self.controllers)
        # The children each CR expects by name, for those it does not own (loaded in run).
        self.expected = ExpectedChildren(self.controllers)
        self._versions: dict[Kind, tuple[str, bool, bool]] = {}  # kind → (rv, listed, event)
        self._queued_through: dict[Kind, int] = {}  # kind → newest rv whose keys are queued
        # The streams whose first list has not been applied yet (all it shows is news, see
        # _apply_kind), and the keys held meanwhile.
        self._unlisted: set[tuple[Kind, str]] = set()
        # Streams this identity may not list (403): no list to wait for (see _holding).
        self._denied: set[tuple[Kind, str]] = set()
        # time.monotonic() after which keys wait no longer; None once that has passed.
        self._listed_by: float | None = 0.0
        self._held: dict[Key, str] = {}
        self._saved_at = float("-inf")  # time.monotonic() of the last resume points' save
        # Keys not queued because Redis did not answer (key → detail), oldest first, and
        # when to try again (time.monotonic()). While any wait, the resume points are not
        # saved: a successor replays their changes, so a watcher's death loses none.
        self._unsent: dict[Key, str] = {}
        self._unsent_retry_at, self._unsent_delay = 0.0, UNSENT_RETRY
        self._unsent_dropped = 0  # past UNSENT_KEPT since Redis last answered
        self._queueing = Outage(log, "Could not queue keys", recovered="Queued keys again")
        self._writing = Outage(
            log, "Could not write a batch to the mirror", recovered="Wrote to the mirror again"
        )
        self._saving = Outage(
            log, "Could not save the watches' resume points", recovered="Saved them again"
        )

    # -- readers -------------------------------------------------------------------------

    def _stream(self, kind: Kind, namespace: str, version: str) -> None:
        delay, fields = 0.1, self.fields.get(kind, "")
        resuming = bool(version)  # from a predecessor's resume point, which may have expired
        stream = (kind, namespace)
        where = f" in namespace {namespace}" if namespace else ""
        while not self.stop.is_set():
            try:
                if not version:
                    items, version = self.kube.list(kind, namespace, fields=fields)
                    if stream in self._denied:
                        log.warning("Watching %s%s: it may be listed now", kind.kind, where)
                        self._denied.discard(stream)
                    self._put(Listed(kind, namespace, items, version))
                for type_, body in self.kube.watch(
                    kind,
                    namespace,
                    resource_version=version,
                    timeout_seconds=WATCH_TIMEOUT,
                    fields=fields,
                ):
                    if self.stop.is_set():
                        return
                    version = str(body["metadata"].get("resourceVersion") or version)
                    if trace.ON and kind in self.primaries:
                        trace.mark("watched", _traced(body))
                    self._put(Streamed(kind, type_, body))
                    delay, resuming = 0.1, False
                resuming = False  # the watch ran its course: the point had not expired
            except Gone:
                # After a restart the usual case, once per kind (the server kept no history
                # that old): not news. Expiring while it runs is.
                (log.debug if resuming else log.info)(
                    "Watch of %s expired (410 Gone): listing again", kind
                )
                version, resuming = "", False
            except Forbidden as exc:
                # Said once, not at every look: nothing changes until someone grants it, which
                # may happen while we run (a 403 costs the server little).
                retry = settings.OPSBOARD_DENIED_RETRY
                if stream not in self._denied:
                    log.error(
                        "Cannot watch %s%s, so it is not mirrored and its changes wake no "
                        "reconcile: %s. Grant this identity list and watch on %s (the "
                        "operators' ClusterRole: k8s/rbac/role.yaml); looking again every %g s",
                        kind.kind, where, exc, kind.resource, retry,
                    )  # fmt: skip
                self._denied.add(stream)
                version = ""
                self.stop.wait(retry)
            except (TemporaryError, PermanentError, ValueError, KeyError) as exc:
                # A refusal other than a 403 (a 400 from a server that will not take our
                # field selector, say) too: a stream that ended here would be gone for good.
                log.warning("Watch of %s failed (%s); reconnecting in %.1fs", kind, exc, delay)
                self.stop.wait(delay)
                delay = min(delay * 2, 30.0)

    def _put(self, item: Listed | Streamed) -> None:
        """Hands an item to the writer; while it is INBOX_MAX behind, the stream waits (and
        the server holds what it has not sent yet) rather than memory growing."""
        while self.inbox.qsize() >= INBOX_MAX and not self.stop.is_set():
            self.stop.wait(0.01)
        self.inbox.put(item)

    # -- the writer ----------------------------------------------------------------------

    def _drain(self, first: Listed | Streamed) -> list[Listed | Streamed]:
        batch = [first]
        until = time.monotonic() + self._wait_for(first)
        while len(batch) < BATCH:
            try:
                item = self.inbox.get_nowait()
            except queue.Empty:
                wait = until - time.monotonic()
                if wait <= 0:
                    break
                try:
                    item = self.inbox.get(timeout=wait)
                except queue.Empty:
                    break
            batch.append(item)
            until = min(until, time.monotonic() + self._wait_for(item))
        return batch

    def _wait_for(self, item: Listed | Streamed) -> float:
        """How long the batch holding `item` may wait for more: a primary's change not at
        all (a user's edit is what latency is about), unless it leaves the generation
        observed (see _observed); a pod turning ready or deleted (what a CR's status tells)
        READY_GRACE, time for its ReplicaSet's change to come in on the other watch; any
        other owned change `linger`, so that a pod's creation and scheduling wait for its
        readiness."""
        if isinstance(item, Listed) or not self._can_wait(item):
            return 0.0
        if item.kind in self.primaries:
            return self.linger
        if item.kind == POD and (item.type == "DELETED" or pod_is_ready(item.body)):
            return READY_GRACE
        return self.linger

    def _apply(self, batch: list[Listed | Streamed]) -> None:
        # Per kind, in stream order.
        by_kind: dict[Kind, list[Listed | Streamed]] = {}
        for item in batch:
            by_kind.setdefault(item.kind, []).append(item)
        if len(batch) <= TOGETHER and all(
            isinstance(item, Streamed) and self._can_wait(item) for item in batch
        ):
            # A small batch, the usual one, is one mirror write and one round trip to the
            # queue however many kinds it holds: a write per kind cost most of its time.
            changes = self._apply_kinds(by_kind)
            primary = [change for change in changes if change.kind in self.primaries]
            owned = [change for change in changes if change.kind not in self.primaries]
            self._enqueue_all(
                keys_for(
                    primary, self.controllers, self.owners, self.echoes, expected=self.expected
                )
                + self._owned_keys(owned)
            )
            spec_versions_record(primary)  # see _apply_large
        else:
            self._apply_large(by_kind)
        if self._holding():
            return  # nothing queued yet, so the resume points are not saved either
        self._release_held()
        if self._unsent:
            return  # keys wait for Redis: the resume points wait for them (see __init__)
        for kind, (version, _, _) in self._versions.items():
            if version.isdigit() and not self.namespaces:  # see run()
                self._queued_through[kind] = int(version)
        self._save_versions()

    def _can_wait(self, item: Streamed) -> bool:
        """Whether a change may wait for others: for more to join its batch (_wait_for), and
        for the owned changes beside it to be mirrored (_apply). Not a primary's change that
        asks for work (a user's edit, a new CR, a deletion: what latency is about), only
        one that leaves its generation observed (see _observed)."""
        return item.kind not in self.primaries or _observed(item)

    def _apply_large(self, by_kind: dict[Kind, list[Listed | Streamed]]) -> None:
        # Primary kinds first, queued as soon as they are mirrored, so a CR's change never
        # waits behind a flood of Pod or Event updates, nor a re-list.
        for kind in [k for k in by_kind if k in self.primaries]:
            changes = self._apply_kind(kind, by_kind[kind])
            self._enqueue_all(
                keys_for(
                    changes, self.controllers, self.owners, self.echoes, expected=self.expected
                )
            )
            # The change history (kubectl's changes included) after the queueing: a write
            # less between a user's change and its reconcile. A watcher that dies in between
            # replays the batch (its resume point is saved after), and records it then.
            spec_versions_record(changes)
        # Owned kinds together: an owner chain mirrored in this batch (a ReplicaSet and
        # its Pods) is complete before the changes are mapped to keys.
        owned = self._apply_kinds({k: v for k, v in by_kind.items() if k not in self.primaries})
        self._enqueue_all(self._owned_keys(owned))

    def _owned_keys(self, changes: list[Change]) -> list[tuple[Key, str]]:
        """The keys of a batch's owned changes, and of those of earlier batches whose owner
        was not mirrored then (see UNOWNED_WAIT): mapped again once per batch, once this
        batch's owners are mirrored."""
        now = time.monotonic()
        held = [(change, at) for change, at in self._unowned if now - at < UNOWNED_WAIT]
        since = {id(change): at for change, at in held}
        unowned: list[Change] = []
        keys = keys_for(
            [*(change for change, _ in held), *changes],
            self.controllers,
            self.owners,
            self.echoes,
            unowned=unowned,
            expected=self.expected,
        )
        self._unowned = [(c, since.get(id(c), now)) for c in unowned][-UNOWNED_KEPT:]
        return keys

    def _holding(self) -> bool:
        """Whether keys still wait for every kind's first list, as controller-runtime waits
        for its caches to sync. A run started before, say, the ConfigMaps were listed could
        create one that is deleted before that list: the list shows nothing, the watch
        starts after both, and its owner, done, waits for the resync (10 min). A kind not
        listed within SYNC_WAIT (a missing CRD, a server that does not answer) is waited for
        no longer, nor one this identity may not list (a 403), from its first answer."""
        if not (self._unlisted - self._denied) or self._listed_by is None:
            return False
        if time.monotonic() > self._listed_by:
            kinds = ", ".join(sorted({kind.kind for kind, _ in self._unlisted}))
            log.warning("Not listed after %gs: %s; reconciling without them", SYNC_WAIT, kinds)
            self._listed_by = None
            return False
        return True

    def _release_held(self) -> None:
        held, self._held = list(self._held.items()), {}
        self._enqueue_all(held)

    def _enqueue_all(self, keys: list[tuple[Key, str]]) -> None:
        if self._unlisted and self._holding():
            for key, detail in keys:
                self._held.setdefault(key, detail)
            return
        if self._unsent:  # Redis did not answer: behind those, sent with them (_send_unsent)
            self._keep_unsent(keys)
            return
        self._send(keys)

    def _send(self, keys: list[tuple[Key, str]]) -> bool:
        """Queues `keys`; False when Redis did not answer: then they are kept to send
        again. A key queued before the failure is sent twice, which its dedup step absorbs
        (or, if it ran in between, costs one more run, never a lost one)."""
        try:
            if self.enqueue_many is not None and len(keys) > 1:
                self.enqueue_many([(key, "event", detail) for key, detail in keys])
            else:
                for key, detail in keys:
                    self.enqueue(key=key, trigger="event", detail=detail)
        except Exception as exc:
            self._keep_unsent(keys)
            self._unsent_retry_at = time.monotonic() + self._unsent_delay
            self._unsent_delay = min(self._unsent_delay * 2, UNSENT_RETRY_MAX)
            then = f"{len(self._unsent)} key(s) kept, queued once Redis answers"
            self._queueing.failed(exc, then=then)
            return False
        self._queueing.worked()
        if trace.ON:
            trace.mark("queued", " ".join(str(key) for key, _ in keys))
        return True

    def _keep_unsent(self, keys: list[tuple[Key, str]]) -> None:
        for key, detail in keys:
            self._unsent.setdefault(key, detail)
        over = len(self._unsent) - UNSENT_KEPT
        if over > 0:
            for key in list(self._unsent)[:over]:
                del self._unsent[key]
            if not self._unsent_dropped:
                log.warning("Over %d keys wait for Redis: the oldest are dropped", UNSENT_KEPT)
            self._unsent_dropped += over

    def _send_unsent(self, *, now: bool = False) -> None:
        """Sends the keys kept while Redis was down, when their retry time has come."""
        if not self._unsent or (not now and time.monotonic() < self._unsent_retry_at):
            return
        keys, self._unsent = list(self._unsent.items()), {}
        if not self._send(keys):
            return
        log.info("Queued %d key(s) kept while Redis did not answer", len(keys))
        self._unsent_delay = UNSENT_RETRY
        if self._unsent_dropped and self.resync is not None:
            try:
                self.resync()
            except Exception:  # Redis gone again: beat's periodic resync catches them up
                log.warning("Could not resync for the keys dropped", exc_info=True)
            else:
                log.info("Resynced for the %d key(s) dropped", self._unsent_dropped)
                self._unsent_dropped = 0

    def _events_about_primaries(self) -> str:
        """A field selector for the Events worth reading: the UI shows a CR's Events only,
        and the Events about its Pods, ReplicaSets and Deployments (scheduled, pulled,
        started, scaled: six per new CR on a real cluster, seven in all) cost the watcher
        more to read and drop than all it keeps. By kind only (a selector has no "or");
        `_worth_mirroring` still checks each Event's apiVersion and reason, and the kinds
        of no watch."""
        primary = {kind.kind for kind in self.primaries}
        others = sorted(
            {kind.kind for kind in self.kinds} - primary - {k.kind for k in REFUSALS_TOLD_BY}
        )
        return ",".join(f"involvedObject.kind!={kind}" for kind in others)

    def _worth_mirroring(self, event: Body) -> bool:
        """About a CR; or a refused pod create of a workload that has no ReplicaFailure
        condition to say so, which the diagnosis reads."""
        involved = event.get("involvedObject") or {}
        of = (involved.get("apiVersion"), involved.get("kind"))
        if event.get("reason") == "FailedCreate" and of in _REFUSING:
            return True
        return of in self._primary_versions

    def _apply_kinds(self, by_kind: dict[Kind, list[Listed | Streamed]]) -> list[Change]:
        """Several kinds' items; the streamed events of those not re-listed in the batch
        are mirrored together (mirror_apply_kinds: one read and one write for them all)."""
        changes: list[Change] = []
        together: list[KindEvents] = []
        for kind, items in by_kind.items():
            if any(isinstance(item, Listed) for item in items):
                changes.extend(self._apply_kind(kind, items))
            else:
                events = self._streamed(kind, [i for i in items if isinstance(i, Streamed)])
                together.append(KindEvents(kind, events, self._queued_through.get(kind)))
        return [*changes, *mirror_apply_kinds(together)]

    def _streamed(self, kind: Kind, items: list[Streamed]) -> list[tuple[str, Body]]:
        """The events to mirror of a kind's streamed items; notes how far the stream got."""
        if kind == EVENT:  # the UI shows a CR's Events; Pods' Events would only cost writes
            items = [i for i in items if i.type == "BOOKMARK" or self._worth_mirroring(i.body)]
        events: list[tuple[str, Body]] = []
        for item in items:
            version = str(item.body["metadata"].get("resourceVersion") or "")
            news = item.type != "BOOKMARK" and (
                kind != NODE or self._heartbeats.news(item.type, item.body)
            )
            self._reached(kind, version, event=news)
            if news:
                events.append((item.type, item.body))
        return events

    def _apply_kind(self, kind: Kind, items: list[Listed | Streamed]) -> list[Change]:
        """One kind's items in order: its re-lists, and the events between them."""
        changes: list[Change] = []
        since = self._queued_through.get(kind)
        streamed: list[Streamed] = []
        for item in [*items, None]:
            if isinstance(item, Streamed):
                streamed.append(item)
                continue
            if streamed:
                events = self._streamed(kind, streamed)
                changes.extend(mirror_apply(kind=kind, events=events, queued_through=since))
                streamed = []
            if item is None:
                break
            listed = item.items
            if kind == EVENT:  # the UI shows a CR's Events; Pods' Events would only cost writes
                listed = [e for e in listed if self._worth_mirroring(e)]
            namespaces = [item.namespace] if item.namespace else []
            # A stream's first list with no resume point: a predecessor that died before
            # its first save (keys held, or not queued yet) mirrored what it shows, and
            # queued nothing of it. So every object counts as news (the reconciles of all,
            # as controller-runtime's first list brings); a later re-list (410), only what
            # differs from the mirror, or is newer than the keys known queued.
            first = (kind, item.namespace) in self._unlisted
            self._unlisted.discard((kind, item.namespace))
            changes.extend(
                mirror_relist(
                    kind=kind,
                    items=listed,
                    namespaces=namespaces,
                    queued_through=0 if first else since,
                )
            )
            self._reached(kind, item.resource_version, listed=True)
        return changes

    def _reached(
        self, kind: Kind, version: str, *, listed: bool = False, event: bool = False
    ) -> None:
        """Notes how far a kind's stream got, and whether it was re-listed or brought an
        event since the last save (both kept until then: see _save_versions).

        A watcher of chosen namespaces keeps no resume point (one version per namespace's
        stream would not make one): it saves "" beside its stamps, so the pages still say
        when the mirror last changed, and a later watcher of all namespaces lists afresh."""
        if self.namespaces:
            version = ""
        _, was_listed, had_event = self._versions.get(kind, ("", False, False))
        self._versions[kind] = (version, was_listed or listed, had_event or event)

    def _save_versions(self, *, quiet: bool = False, final: bool = False) -> None:
        """Records the resume points once the batch's keys are queued, at most every
        SAVE_EVERY, or when the inbox is `quiet`. A successor takes anything newer than
        the saved point as possibly unqueued news, so a late save costs it repeats (runs
        that find nothing to do); a save per batch cost a database write per batch, and
        on a real cluster batches are small. Points that no event or list moved (bookmarks,
        heartbeats: nothing to repeat) wait QUIET_SAVE_EVERY, unless `final`."""
        if not self._versions:
            return
        now = time.monotonic()
        news = any(listed or event for _, listed, event in self._versions.values())
        if (
            final
            or (news and (quiet or now >= self._saved_at + SAVE_EVERY))
            or (now >= self._saved_at + QUIET_SAVE_EVERY)
        ):
            kind_watches_save(self._versions)
            self._versions.clear()
            self._saved_at = now

    def run(self) -> None:
        """Watches until `stop` is set. Call from the thread that may write the mirror;
        after a graceful stop, join it before handing the lease back."""
        self.expected.load()  # the CRs that do not change since the resume point too
        for kind in self.kinds:
            resume = kind_watch_resume_point(kind=kind)
            # Saved after the keys were queued. A watcher of chosen namespaces lists them
            # afresh and keeps no single point per kind, so it cannot tell what was queued.
            if resume.isdigit() and not self.namespaces:
                self._queued_through[kind] = int(resume)
            for namespace in (self.namespaces if kind.namespaced else []) or [""]:
                # A watch of all namespaces resumes where the last watcher stopped (it
                # replays what it missed); else list first, and keys wait for that list.
                if namespace or not resume:
                    self._unlisted.add((kind, namespace))
                threading.Thread(
                    target=self._stream,
                    args=(kind, namespace, "" if namespace else resume),
                    name=f"watch {kind}",
                    daemon=True,
                ).start()
        self._listed_by = time.monotonic() + SYNC_WAIT
        while not self.stop.is_set():
            self._send_unsent()
            try:
                first = self.inbox.get(timeout=0.5)
            except queue.Empty:
                if self._held and not self._holding():  # a kind never listed: go on
                    self._release_held()
                if not self._holding() and not self._unsent:  # all queued: save the points
                    self._save_quietly()
                continue
            self._apply_retrying(self._drain(first))
        # Stopped gracefully, still the leader: save what is queued, so a successor does
        # not replay the last moments as news.
        if self.deposed.is_set() or self._holding():
            return
        self._send_unsent(now=True)
        if not self._unsent:
            self._save_quietly(final=True)

    def _save_quietly(self, *, final: bool = False) -> None:
        try:
            self._save_versions(quiet=True, final=final)
        except Exception as exc:  # the database busy: the next batch or quiet moment saves them
            close_if_broken()
            self._saving.failed(exc)
        else:
            self._saving.worked()

    def _apply_retrying(self, batch: list[Listed | Streamed]) -> None:
        """A busy database (SQLite's one writer) must not lose a batch: try again for a
        minute, then let the error end the watcher; its successor resumes from the last
        saved version, so it replays the batch."""
        delay, deadline = 0.1, time.monotonic() + 60
        while True:
            try:
                self._apply(batch)
            except Exception as exc:
                # A connection the database dropped (a restart) is closed, so that the
                # next attempt connects again instead of failing on it for good.
                close_if_broken()
                if time.monotonic() > deadline or self.stop.is_set():
                    raise
                self._writing.failed(exc, then="retrying")
                self.stop.wait(delay)
                delay = min(delay * 2, 5.0)
            else:
                self._writing.worked()
                return
