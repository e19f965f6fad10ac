"""The store: the single source of truth, in memory for fast reads, written through to SQLite.

Stored objects are never mutated after commit (every write builds a new dict), so readers can
serialise them outside the lock; the encoded bytes are kept beside each object so GET and
LIST send them without re-encoding. The public methods return private copies.
"""

from __future__ import annotations

import bisect
import builtins
import functools
import logging
import queue
import random
import re
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, Unpack, cast

import orjson

from kubesim import (
    apply_ownership,
    apply_patch,
    builtin_schema,
    crds,
    defaults,
    errors,
    gojson,
    immutable,
    managedfields,
    omitempty,
    scale,
    scale_fields,
    schema,
)
from kubesim.duplicates import Duplicates
from kubesim.errors import ApiError, FieldError, GoLiteral
from kubesim.jsonutil import clone, dumps, later, loads, loads_object, now
from kubesim.patch import json_patch, merge_patch, strategic_merge
from kubesim.persistence import Persistence
from kubesim.resources import Registry, ResourceType
from kubesim.selectors import exact_name, parse_fields, parse_labels

log = logging.getLogger(__name__)

Entry = tuple[dict[str, Any], bytes]


# The options of each write, shared by the verb that returns a private copy (create) and
# its twin that returns the stored object and its encoding (create_entry, for the HTTP
# layer): one list, so the two cannot drift apart.
class CreateOptions(TypedDict, total=False):
    namespace: str | None
    dry_run: bool
    field_validation: str | None
    warnings: builtins.list[str] | None
    field_manager: str | None  # who writes, for managedFields; None: kubesim's controllers


class UpdateOptions(CreateOptions, total=False):
    subresource: str | None
    name: str | None


class PatchOptions(TypedDict, total=False):
    patch_type: str
    subresource: str | None
    dry_run: bool
    field_validation: str | None
    warnings: builtins.list[str] | None
    field_manager: str | None
    force: bool


class DeleteOptions(TypedDict, total=False):
    propagation: str | None
    grace_period_seconds: int | None
    preconditions: dict[str, Any] | None
    dry_run: bool


Subscriber = Callable[[str, str, dict[str, Any]], None]
Admission = Callable[[str, "dict[str, Any] | None", "dict[str, Any] | None"], None]
AnyAdmission = Callable[[str, str, "dict[str, Any] | None", "dict[str, Any] | None"], None]

INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_DIGITS = re.compile(r"[0-9]+")
_UIDS = random.Random()  # seeded from os.urandom; uids need to be unique, not secret


def _uid() -> str:
    """A version-4 UUID's text, as uuid.uuid4() gives it at a third of the cost (no system
    call, no UUID object): every object and every Event a cold start creates needs one."""
    bits = _UIDS.getrandbits(128) & ~(0xF000 << 64 | 0xC000 << 48) | (0x4000 << 64 | 0x8000 << 48)
    text = f"{bits:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def update_copy(obj: dict[str, Any], subresource: str | None) -> dict[str, Any]:
    """The private copy of `obj` that update_entry may keep. A status write takes only the
    status (and the name and resourceVersion it is checked against) from it: copying the
    rest, a pod's whole spec, was a copy for nothing."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if subresource != "status" or not isinstance(meta, dict):
        return cast(dict[str, Any], clone(obj))
    body: dict[str, Any] = {"metadata": dict(meta)}
    if "status" in obj:
        body["status"] = clone(obj["status"])
    return body


_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # what generateName draws from
# etcd keys that are not /registry/<resource>, for the messages that name them.
_STORAGE_PREFIX = {
    "services": "services/specs",
    "endpoints": "services/endpoints",
    "nodes": "minions",
    "replicationcontrollers": "controllers",
}


def _uint64_error(text: str) -> str | None:
    """What strconv.ParseUint(text, 10, 64) says is wrong with text, if anything."""
    if not _DIGITS.fullmatch(text):
        return "invalid syntax"
    return "value out of range" if int(text) >= 1 << 64 else None


def _wrong_type_in_patch(
    patch_type: str, old: dict[str, Any], body: Any, exc: builtin_schema.TypeMismatch
) -> ApiError:
    """kube-apiserver decodes a patch's result itself, and blames the patch for a value of the
    wrong type: 422, not the 400 of a create or update."""
    if patch_type == "strategic":  # the merged map is converted, and the patch shown
        return errors.patch_invalid(gojson.printed(body), exc.unstructured())
    # merge and JSON patches decode the patched JSON, which is shown before any pruning
    patched = (
        merge_patch(clone(old), body) if patch_type == "merge" else json_patch(clone(old), body)
    )
    return errors.patch_invalid(dumps(patched).decode(), str(exc))


def _refused_in_patch(
    patch_type: str, old: dict[str, Any], body: Any, why: str, *, custom: bool = False
) -> ApiError:
    """A patch whose result has unknown or repeated fields under fieldValidation=Strict: the
    422 of a value of the wrong type, the same patch or patched object shown (a custom
    resource's as Go marshals a map: every key sorted)."""
    if patch_type == "strategic":
        return errors.patch_invalid(gojson.printed(body), why)
    patched = (
        merge_patch(clone(old), body) if patch_type == "merge" else json_patch(clone(old), body)
    )
    if custom:
        shown = orjson.dumps(patched, option=orjson.OPT_SORT_KEYS).decode()
        return errors.patch_invalid(gojson.html_escaped(shown), why)
    return errors.patch_invalid(dumps(patched).decode(), why)


def _told(
    unknown: list[str],
    duplicates: Duplicates | None,
    *,
    strict: bool,
    prefix: str,
    warnings: list[str] | None,
    refused: Callable[[str], ApiError] | None,
) -> None:
    """What the decoder says of unknown fields and (`duplicates`) repeated ones: under
    Strict the write's error (`refused`'s, else a 400 after `prefix`), else warnings."""
    if duplicates is not None:
        issues = duplicates.issues(unknown, strict=strict)
    else:
        issues = [f'unknown field "{u}"' for u in unknown]
    if not issues:
        return
    if strict:
        why = "strict decoding error: " + ", ".join(issues)
        raise refused(why) if refused else errors.bad_request(prefix + why)
    if warnings is not None:
        warnings.extend(issues)


def _storage_key(rt: ResourceType, ns: str, name: str) -> str:
    """The object's etcd key, as kube-apiserver's storage errors name it."""
    prefix = f"{rt.group}/{rt.plural}" if rt.crd else _STORAGE_PREFIX.get(rt.plural, rt.plural)
    return f"/registry/{prefix}/{ns}/{name}" if ns else f"/registry/{prefix}/{name}"


_SERVER_META = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "selfLink",
)


def _meta_copy(meta: dict[str, Any]) -> dict[str, Any]:
    """A copy of a stored object's metadata to write on. managedFields are shared, not
    copied: managedfields.track replaces the list, never changes it (nor its entries)."""
    managed = meta.get("managedFields")
    if managed is None:
        return cast(dict[str, Any], clone(meta))
    copy = cast(dict[str, Any], clone({k: v for k, v in meta.items() if k != "managedFields"}))
    copy["managedFields"] = managed
    return copy


def _tracked_kind(rt: ResourceType, obj: dict[str, Any]) -> managedfields.Kind:
    schema_root = None
    if rt.crd:
        version = str(obj.get("apiVersion") or rt.api_version).rpartition("/")[2]
        schema_root = (rt.version_info.get(version) or {}).get("schema")
    return managedfields.Kind(
        resource=rt.key, custom=bool(rt.crd), schema=schema_root, status_reset=rt.status
    )


def _track(
    rt: ResourceType,
    old: dict[str, Any] | None,
    new: dict[str, Any],
    manager: str | None,
    subresource: str | None = None,
    applied: dict[str, Any] | None = None,
    sent: Any = managedfields.UNSET,
) -> None:
    """new's managedFields after this write (see managedfields.track)."""
    write = None
    if manager is not None:
        api_version = str(new.get("apiVersion") or rt.api_version)
        write = managedfields.Write(manager, api_version, subresource, applied)
    managedfields.track(_tracked_kind(rt, new), old, new, write, sent, subresource)


def _own_applied(
    rt: ResourceType,
    old: dict[str, Any],
    merged: dict[str, Any],
    applied: dict[str, Any],
    manager: str,
    subresource: str | None,
    force: bool,
) -> None:
    """An apply's field ownership: its conflicts (409 unless forced), then the fields it
    dropped removed from the merged object (apply_ownership.py)."""
    kind = _tracked_kind(rt, merged)
    applier = apply_ownership.Applier(manager, subresource)
    if not force:
        apply_ownership.check_conflicts(kind, old, merged, applier)
    apply_ownership.prune(kind, old, merged, applier, applied)


def _before_first_apply(
    rt: ResourceType, old: dict[str, Any], merged: dict[str, Any]
) -> dict[str, Any]:
    """An apply to an object whose fields no one owns: as the server's skipNonApplied manager
    does, an Update from an empty object first gives them all to `before-first-apply`, with
    whose values the apply then conflicts. Returns old with that entry; `merged` carries it
    to the tracking."""
    version = str(merged.get("apiVersion") or rt.api_version)
    fields = managedfields.changed_fields(_tracked_kind(rt, old), {}, old, None)
    if fields is None:
        return old
    entry = managedfields.new_entry(
        managedfields.BEFORE_FIRST_APPLY, "Update", version, fields, when=now()
    )
    merged.setdefault("metadata", {})["managedFields"] = [entry]
    return {**old, "metadata": {**old["metadata"], "managedFields": [entry]}}


# How many of the window's newest events keep their objects decoded: what live watches
# and the controllers read. Older ones keep only their bytes (see Event).
LIVE_EVENTS = 1_000


@dataclass(slots=True)
class Event:
    """One change in the watch window: the object as committed, and the one it replaced
    (for a selector's transitions), each decoded and as bytes.

    Once LIVE_EVENTS newer ones follow it, an event keeps only the bytes and decodes on
    demand (a watch resuming from an old resourceVersion). Its dicts were most of what the
    cyclic collector walked: with a full window a full collection stopped every request
    for 20-90 ms, where kube-apiserver's concurrent collector pauses for well under one.
    """

    rv: int
    type: str  # ADDED | MODIFIED | DELETED
    resource: str
    namespace: str
    data: bytes
    prev_data: bytes | None
    decoded: dict[str, Any] | None
    prev_decoded: dict[str, Any] | None

    @property
    def obj(self) -> dict[str, Any]:
        decoded = self.decoded  # read once: `settle` may run meanwhile, in another thread
        return decoded if decoded is not None else loads_object(self.data)

    @property
    def prev(self) -> dict[str, Any] | None:
        decoded = self.prev_decoded
        if decoded is not None or self.prev_data is None:
            return decoded
        return loads_object(self.prev_data)

    def settle(self) -> None:
        self.decoded = self.prev_decoded = None


class Store:
    def __init__(
        self,
        data_dir: str | Path | None = None,
        *,
        window: int = 20_000,
        seed: int | None = None,
        root_ca: str | None = None,
    ) -> None:
        self.registry = Registry()
        self.root_ca = root_ca  # PEM of the cluster CA, published in each kube-root-ca.crt
        self._lock = threading.RLock()
        # Guards the event window; each watch waits on its resource's condition (all share
        # this lock), so a change wakes only the watches of its resource, as the watch
        # cache dispatches only to interested watchers. Waking every watch on every change
        # woke a herd of threads for nothing: with an operator's dozen watches, about a
        # quarter of kubesim's CPU in a cold start.
        self._changed_lock = threading.Lock()
        self._watchers: dict[str, threading.Condition] = {}
        self._objects: dict[str, dict[tuple[str, str], Entry]] = {}
        self._uids: dict[str, tuple[str, str, str]] = {}
        self._dependents: dict[str, set[tuple[str, str, str]]] = {}
        self._rv = 0
        self._events: list[Event] = []
        self._window = window
        self.floor = 0  # events at or below this resourceVersion are no longer retained
        # (fn, resources or None for all, the resourceVersion it subscribed at)
        self._subscribers: list[tuple[Subscriber, frozenset[str] | None, int]] = []
        self._queue: queue.SimpleQueue[Event | None] = queue.SimpleQueue()
        self._admission: dict[str, list[Admission]] = {}
        self._admission_of_all: list[AnyAdmission] = []
        self._warned: list[str] | None = None  # the warnings of the write being admitted
        # The subresource and dryRun of the write being admitted (admission webhooks match
        # on the one and tell the other); who asks is told per serving thread.
        self.admitting: tuple[str | None, bool] = (None, False)
        self._requester = threading.local()
        self._writes: dict[str, int] = {}  # commits per resource: caches of a kind notice change
        self._random = random.Random(seed)
        self._db = Persistence(data_dir) if data_dir is not None else None
        self._closed = False
        self._load()
        self._dispatcher = threading.Thread(
            target=self._dispatch, name="kubesim-dispatch", daemon=True
        )
        self._dispatcher.start()
        self._bootstrap()

    # --- lifecycle ----------------------------------------------------------------------------

    def _load(self) -> None:
        if self._db is None:
            return
        rv, rows = self._db.load()  # the last removal's resourceVersion
        for resource, ns, name, data in rows:
            obj = loads(data)
            rv = max(rv, int(obj["metadata"].get("resourceVersion") or 0))
            self._index(resource, ns, name, obj, data, None)
        self._rv = self.floor = rv
        for obj, _ in list(
            self._objects.get("customresourcedefinitions.apiextensions.k8s.io", {}).values()
        ):
            crds.register(self.registry, obj)

    def _bootstrap(self) -> None:
        for ns in INITIAL_NAMESPACES:
            if ("", ns) not in self._objects.get("namespaces", {}):
                self.create("namespaces", {"metadata": {"name": ns}})

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        self._dispatcher.join(timeout=5)
        self.wake_watches()
        with self._lock:
            if self._db is not None:
                self._db.close()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def resource_version(self) -> int:
        return self._rv

    # --- subscriptions and admission ----------------------------------------------------------

    def subscribe(
        self, fn: Subscriber, resources: Collection[str] | None = None
    ) -> Callable[[], None]:
        """Call fn(event_type, resource, obj) after each commit of `resources` (of all when
        None), in commit order, from one thread. obj is the store's own object, as
        committed (a copy decoded for each subscriber was kubesim's largest single cost):
        read it, never change it. Commits made before the call are not delivered, even
        those still queued for earlier subscribers."""
        with self._lock:  # commits hold it too: the resourceVersion read here is a clean cut
            subscriber = (fn, frozenset(resources) if resources is not None else None, self._rv)
            self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            with self._lock:
                if subscriber in self._subscribers:
                    self._subscribers.remove(subscriber)

        return unsubscribe

    def register_admission(self, resource: str, fn: Admission) -> None:
        """A mutating/validating hook run inside create/update/delete, before commit.

        fn(operation, new, old) may change `new` in place or raise ApiError to reject the
        request; it runs under the store lock, so it may read the store but must be quick.
        """
        with self._lock:
            self._admission.setdefault(resource, []).append(fn)

    def register_admission_of_all(self, fn: AnyAdmission) -> None:
        """A hook as `register_admission`'s, run after those for every resource's writes:
        fn(resource, operation, new, old), `resource` as the store keys it (pods,
        deployments.apps). As validating admission in kube-apiserver, which comes last."""
        with self._lock:
            self._admission_of_all.append(fn)

    def warn(self, text: str) -> None:
        """For an admission hook: a `Warning` header on the answer to the write it admits.
        Dropped where no client is told (the cluster's own writes, subresources)."""
        if self._warned is not None:
            self._warned.append(text)

    def wants_warnings(self) -> bool:
        """Whether `warn` tells anyone: a hook may skip working out what nobody reads."""
        return self._warned is not None

    def requested_by(self, user: Any) -> None:
        """The serving thread's: the authenticated user (authn.UserInfo) of its request."""
        self._requester.user = user

    def requester(self) -> Any:
        """Who asks for the write being admitted; None: one of kubesim's own controllers."""
        return getattr(self._requester, "user", None)

    def _admit(
        self,
        resource: str,
        op: str,
        new: dict[str, Any] | None,
        old: dict[str, Any] | None,
        warnings: builtins.list[str] | None = None,
        *,
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> None:
        outer, self._warned = self._warned, warnings  # under the lock, as every write
        outer_write, self.admitting = self.admitting, (subresource, dry_run)
        try:
            for fn in self._admission.get(resource, ()):
                fn(op, new, old)
            for every in self._admission_of_all:
                every(resource, op, new, old)
        finally:
            self._warned, self.admitting = outer, outer_write

    def _dispatch(self) -> None:
        while True:
            ev = self._queue.get()
            if ev is None:
                return
            for fn, resources, since in list(self._subscribers):
                if ev.rv <= since or (resources is not None and ev.resource not in resources):
                    continue
                try:
                    fn(ev.type, ev.resource, ev.obj)
                except Exception:
                    log.exception("kubesim subscriber %r failed on %s %s", fn, ev.type, ev.resource)

    # --- reading ------------------------------------------------------------------------------

    def type_of(self, resource: str) -> ResourceType:
        rt = self.registry.get(resource)
        if rt is None:
            raise errors.resource_not_found()
        return rt

    def get(self, resource: str, namespace: str | None, name: str) -> dict[str, Any]:
        return loads_object(self.get_entry(resource, namespace, name)[1])

    def get_entry(self, resource: str, namespace: str | None, name: str) -> Entry:
        rt = self.type_of(resource)
        entry = self._objects.get(rt.key, {}).get((namespace or "" if rt.namespaced else "", name))
        if entry is None:
            raise errors.not_found(rt.key, name)
        return entry

    def writes_to(self, resources: tuple[str, ...]) -> int:
        """How many commits these resources have seen: unchanged means nothing changed."""
        return sum(self._writes.get(r, 0) for r in resources)

    def snapshot(
        self, resources: tuple[str, ...]
    ) -> tuple[int, dict[str, builtins.list[dict[str, Any]]]]:
        """writes_to(resources) and every object of those resources, read consistently.
        The objects are the store's own: read them, never change them."""
        with self._lock:
            objects = {r: [e[0] for e in self._objects.get(r, {}).values()] for r in resources}
            return self.writes_to(resources), objects

    def get_by_uid(self, uid: str) -> dict[str, Any] | None:
        where = self._uids.get(uid)
        if where is None:
            return None
        entry = self._objects.get(where[0], {}).get((where[1], where[2]))
        return entry[0] if entry else None

    def dependents_of(self, uid: str) -> list[tuple[str, str, str]]:
        with self._lock:
            return sorted(self._dependents.get(uid, ()))

    def list(
        self,
        resource: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> builtins.list[dict[str, Any]]:
        entries, _, _, _ = self.list_entries(
            resource, namespace, label_selector=label_selector, field_selector=field_selector
        )
        return [loads(data) for _, data in entries]

    def list_entries(
        self,
        resource: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        start_after: tuple[str, str] | None = None,
    ) -> tuple[builtins.list[Entry], int, tuple[str, str] | None, int]:
        """Matching entries in key order, the list resourceVersion, the last key when the
        limit cut the list short, and how many matching items remain after it."""
        rt = self.type_of(resource)
        lmatch = parse_labels(label_selector)
        fmatch = parse_fields(rt.key, field_selector, custom=rt.crd is not None)
        with self._lock:
            bucket = self._objects.get(rt.key, {})
            rv = self._rv
            pinned = exact_name(field_selector)
            keys = [k for k in bucket if k[1] == pinned] if pinned is not None else list(bucket)
            ns = namespace or "" if rt.namespaced else ""
            if rt.namespaced and namespace:
                keys = [k for k in keys if k[0] == ns]
            keys.sort()
            if start_after is not None:
                keys = keys[bisect.bisect_right(keys, start_after) :]
            items = [bucket[k] for k in keys]
        out: list[Entry] = []
        last: tuple[str, str] | None = None
        remaining = 0
        for entry in items:
            obj = entry[0]
            if lmatch and not lmatch((obj.get("metadata") or {}).get("labels") or {}):
                continue
            if fmatch and not fmatch(obj):
                continue
            if limit and len(out) >= limit:
                remaining += 1
                continue
            out.append(entry)
        if remaining and out:
            meta = out[-1][0]["metadata"]
            last = (meta.get("namespace", ""), meta["name"])
        return out, rv, last, remaining

    def changed_of(self, resource: str) -> threading.Condition:
        """What the watches of `resource` wait on: notified when one of its objects changes,
        by wake_watches, and every quarter window (so that a quiet resource's watch moves
        its resume point past the others' events before they leave the window)."""
        with self._changed_lock:
            cond = self._watchers.get(resource)
            if cond is None:
                cond = self._watchers[resource] = threading.Condition(self._changed_lock)
            return cond

    def wake_watches(self) -> None:
        """Wakes every watch, to look at the server's state (stopping, faults, closed)."""
        with self._changed_lock:
            for cond in self._watchers.values():
                cond.notify_all()

    def events_after(self, rv: int) -> builtins.list[Event]:
        """Retained events newer than rv; raises 410 Expired when rv is older than the window."""
        with self._changed_lock:
            if rv < self.floor:
                raise errors.gone(f"too old resource version: {rv} ({self.floor + 1})")
            i = bisect.bisect_right(self._events, rv, key=lambda e: e.rv)
            return self._events[i:]

    # --- writing ------------------------------------------------------------------------------

    def _commit(
        self, etype: str, rt: ResourceType, obj: dict[str, Any], prev: dict[str, Any] | None
    ) -> Entry:
        meta = obj["metadata"]
        ns, name = meta.get("namespace", "") if rt.namespaced else "", meta["name"]
        rv = self._rv + 1
        meta["resourceVersion"] = str(rv)
        data = dumps(obj)
        if self._db is not None:
            try:
                self._db.put(rv, rt.key, ns, name, None if etype == "DELETED" else data)
            except Exception as exc:  # the write is not acknowledged, nothing changes
                raise errors.internal(f"storage: {exc}") from exc
        self._rv = rv
        replaced = self._objects.get(rt.key, {}).get((ns, name))
        if prev is None:
            prev_data = None
        elif replaced is not None and replaced[0] is prev:
            prev_data = replaced[1]
        else:  # a copy of the stored object (a first apply's managedFields): rare
            prev_data = dumps(prev)
        self._index(rt.key, ns, name, None if etype == "DELETED" else obj, data, prev)
        self._writes[rt.key] = self._writes.get(rt.key, 0) + 1
        if etype == "DELETED" and rt.key == crds.CRD:
            crds.unregister(self.registry, obj)
        ev = Event(rv, etype, rt.key, ns, data, prev_data, obj, prev)
        with self._changed_lock:
            self._events.append(ev)
            if len(self._events) > LIVE_EVENTS:
                self._events[-LIVE_EVENTS - 1].settle()
            if len(self._events) > self._window + self._window // 4:
                cut = len(self._events) - self._window
                self.floor = self._events[cut - 1].rv
                del self._events[:cut]
            # A CRD's change may end its CRs' watches; a quarter window, see changed_of.
            everyone = rt.key == crds.CRD or rv % max(self._window // 4, 1) == 0
            for resource, watchers in self._watchers.items():
                if everyone or resource == rt.key:
                    watchers.notify_all()
        if self._subscribers:
            self._queue.put(ev)
        return obj, data

    def _index(
        self,
        resource: str,
        ns: str,
        name: str,
        obj: dict[str, Any] | None,
        data: bytes,
        prev: dict[str, Any] | None,
    ) -> None:
        bucket = self._objects.setdefault(resource, {})
        key = (resource, ns, name)
        if prev is not None:
            for ref in prev["metadata"].get("ownerReferences") or []:
                deps = self._dependents.get(ref.get("uid"))
                if deps is not None:
                    deps.discard(key)
                    if not deps:
                        del self._dependents[ref.get("uid")]
        if obj is None:
            bucket.pop((ns, name), None)
            if prev is not None:
                self._uids.pop(prev["metadata"].get("uid"), None)
            return
        bucket[(ns, name)] = (obj, data)
        self._uids[obj["metadata"]["uid"]] = key
        for ref in obj["metadata"].get("ownerReferences") or []:
            self._dependents.setdefault(ref.get("uid"), set()).add(key)

    def _check_namespace(self, rt: ResourceType, ns: str, name: str) -> None:
        entry = self._objects.get("namespaces", {}).get(("", ns))
        if entry is None:
            raise errors.not_found("namespaces", ns)
        if entry[0]["metadata"].get("deletionTimestamp"):
            raise errors.forbidden(
                rt.key,
                name,
                f"unable to create new content in namespace {ns} because it is being terminated",
            )

    def _check_type(self, rt: ResourceType, obj: dict[str, Any]) -> None:
        api_version = obj.get("apiVersion")
        if api_version and api_version not in {rt.api_version_for(v) for v in rt.served_versions}:
            raise errors.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API "
                f"version ({rt.api_version})"
            )
        kind = obj.get("kind")
        if kind and kind != rt.kind:
            raise errors.bad_request(
                f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})"
            )
        obj["apiVersion"] = api_version or rt.api_version
        obj["kind"] = rt.kind

    def _decode(
        self,
        rt: ResourceType,
        obj: dict[str, Any],
        *,
        strict: bool,
        warnings: builtins.list[str] | None,
        wrong_type: Callable[[builtin_schema.TypeMismatch], ApiError] | None = None,
        duplicates: Duplicates | None = None,
        refused: Callable[[str], ApiError] | None = None,
    ) -> None:
        """What decoding into kube-apiserver's Go types does to a built-in object: wrong
        JSON types are 400 (or `wrong_type`'s error), unknown fields are dropped with a
        warning (400 when Strict, or `refused`'s error), as are repeated ones
        (`duplicates`)."""
        version = obj.get("apiVersion", rt.api_version).rpartition("/")[2]
        prefix = f'{rt.kind} in version "{version}" cannot be handled as a {rt.kind}: '
        try:
            if rt.crd:
                unknown = builtin_schema.prune_metadata(obj)
            else:
                unknown = builtin_schema.prune(rt.key, obj)
        except builtin_schema.TypeMismatch as exc:
            raise (
                wrong_type(exc) if wrong_type else errors.bad_request(prefix + str(exc))
            ) from None
        # A custom resource's repeated fields are told with its schema's (_prepare).
        _told(
            unknown,
            None if rt.crd else duplicates,
            strict=strict,
            prefix=prefix,
            warnings=warnings,
            refused=refused,
        )

    def _prepare(
        self,
        rt: ResourceType,
        obj: dict[str, Any],
        *,
        strict: bool,
        warnings: builtins.list[str] | None,
        old: dict[str, Any] | None = None,
        name_errors: builtins.list[FieldError] | None = None,
        duplicates: Duplicates | None = None,
        refused: Callable[[str], ApiError] | None = None,
        status_only: bool = False,
    ) -> None:
        """Defaulting, pruning and validation shared by create and update (given `old`);
        a create's name errors are reported with the rest, first, as ObjectMeta's are.
        `status_only`: a custom resource's status write, whose spec is not validated."""
        errs: list[FieldError] = []
        if rt.crd:
            version = obj["apiVersion"].rpartition("/")[2]
            root = (rt.version_info.get(version) or {}).get("schema")
            new, unknown, errs = schema.process(root, obj, status_only=status_only)
            # the decoder's repeated fields, then the fields pruning dropped, sorted
            _told(
                sorted(unknown),
                duplicates,
                strict=strict,
                prefix=f'{rt.kind} in version "{version}" cannot be handled as a {rt.kind}: ',
                warnings=warnings,
                refused=refused,
            )
            obj.clear()
            obj.update(new)
            errs += scale.replicas_errors(rt, obj, spec=not status_only)
        else:
            defaults.apply_defaults(rt.key, obj)
            errs = defaults.validate(rt.key, rt.kind, obj)
            if rt.key == crds.CRD:
                errs += crds.validate(obj)
            if old is not None:
                before, after = immutable.update_errors(rt.key, obj, old)
                errs = before + errs + after
        omitempty.drop_empty(obj, custom=bool(rt.crd))
        errs = (name_errors or []) + defaults.validate_metadata(obj["metadata"]) + errs
        if errs:
            raise errors.invalid(rt.kind, rt.group, obj["metadata"].get("name", ""), errs)

    def create(
        self, resource: str, obj: dict[str, Any], **options: Unpack[CreateOptions]
    ) -> dict[str, Any]:
        return loads_object(self.create_entry(resource, clone(obj), **options)[1])

    def create_entry(
        self,
        resource: str,
        obj: dict[str, Any],
        *,
        namespace: str | None = None,
        dry_run: bool = False,
        field_validation: str | None = None,
        warnings: builtins.list[str] | None = None,
        decoded: bool = False,
        field_manager: str | None = None,
        applied: dict[str, Any] | None = None,
        duplicates: Duplicates | None = None,
    ) -> Entry:
        """Create from an object the store may keep (callers pass a private copy).

        `decoded`: the object was built by the cluster's own controllers from its kind's
        fields, so decoding it as a client's JSON (_decode) would change nothing: skipped,
        as it was 7 % of kubesim's CPU in a cold start (seven Events per new pod).
        `duplicates`: the fields the client's JSON repeated."""
        rt = self.type_of(resource)
        admitted = warnings  # admission's warnings are said whatever the field validation
        if field_validation == "Ignore":
            warnings = None  # no word of unknown or repeated fields
        if not isinstance(obj, dict):
            raise errors.bad_request("Object 'Kind' is missing in the request body")
        self._check_type(rt, obj)
        given = obj.get("metadata")
        sent = given.get("managedFields", managedfields.UNSET) if isinstance(given, dict) else None
        if not decoded:
            strict = field_validation == "Strict"
            self._decode(rt, obj, strict=strict, warnings=warnings, duplicates=duplicates)
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            meta = obj["metadata"] = {}
        if rt.namespaced:
            if namespace and meta.get("namespace") and meta["namespace"] != namespace:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on "
                    "the request"
                )
            meta["namespace"] = namespace or meta.get("namespace") or "default"
        else:
            meta.pop("namespace", None)
        if meta.get("resourceVersion"):
            raise errors.bad_request("resourceVersion should not be set on objects to be created")
        with self._lock:
            ns = meta.get("namespace", "")
            bucket = self._objects.get(rt.key, {})
            if not meta.get("name"):
                if not meta.get("generateName"):
                    raise errors.invalid(
                        rt.kind,
                        rt.group,
                        "",
                        [
                            FieldError(
                                "Required",
                                "metadata.name",
                                detail="name or generateName is required",
                            )
                        ],
                    )
                while True:
                    suffix = "".join(self._random.choice(_NAME_ALPHABET) for _ in range(5))
                    meta["name"] = meta["generateName"][:58] + suffix
                    if (ns, meta["name"]) not in bucket:
                        break
            name = meta["name"]
            if rt.namespaced:  # NamespaceLifecycle admission comes before validation
                self._check_namespace(rt, ns, name)
            for k in _SERVER_META:
                meta.pop(k, None)
            if field_manager is None:
                meta.pop("managedFields", None)
            meta["uid"] = _uid()
            meta["creationTimestamp"] = now()
            if rt.tracks_generation:
                meta["generation"] = 1
            if rt.status:
                status = defaults.initial_status(rt.key, obj)
                if rt.crd:
                    obj.pop("status", None)
                elif status is not None:
                    obj["status"] = status
            if rt.key == "namespaces":
                obj.setdefault("spec", {})["finalizers"] = ["kubernetes"]
            if rt.key == crds.CRD:
                crds.prepare_create(obj)
            self._prepare(
                rt,
                obj,
                strict=field_validation == "Strict",
                warnings=warnings,
                name_errors=defaults.validate_name(rt.key, name),
                duplicates=duplicates,
            )
            if rt.key == "daemonsets.apps":
                defaults.template_generation(obj, None)
            if field_manager is not None:  # what was decoded and defaulted, not admission's
                _track(rt, None, obj, field_manager, applied=applied, sent=sent)
            self._admit(rt.key, "CREATE", obj, None, admitted, dry_run=dry_run)
            if (ns, name) in bucket:
                raise errors.already_exists(rt.key, name)
            if dry_run:
                return obj, dumps(obj)
            entry = self._commit("ADDED", rt, obj, None)
            if rt.key == crds.CRD:
                crds.register(self.registry, obj)
                established = clone(obj)
                crds.mark_established(established)
                self._commit("MODIFIED", rt, established, obj)
            return entry

    def update(
        self, resource: str, obj: dict[str, Any], **options: Unpack[UpdateOptions]
    ) -> dict[str, Any]:
        subresource = options.get("subresource")
        return loads_object(
            self.update_entry(resource, update_copy(obj, subresource), **options)[1]
        )

    def update_entry(
        self,
        resource: str,
        obj: dict[str, Any],
        *,
        subresource: str | None = None,
        namespace: str | None = None,
        name: str | None = None,
        dry_run: bool = False,
        field_validation: str | None = None,
        warnings: builtins.list[str] | None = None,
        decoded: bool = False,
        field_manager: str | None = None,
        applied: dict[str, Any] | None = None,
        duplicates: Duplicates | None = None,
        refused: Callable[[str], ApiError] | None = None,
    ) -> Entry:
        """Replace, or write a subresource; `decoded` and `duplicates` as for create_entry."""
        rt = self.type_of(resource)
        admitted = warnings if subresource is None else None
        if field_validation == "Ignore":
            warnings = None
        if not isinstance(obj, dict):
            raise errors.bad_request("Object 'Kind' is missing in the request body")
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            meta = obj["metadata"] = {}
        sent = meta.get("managedFields", managedfields.UNSET)  # before decoding drops a []
        # The handler's order: the body's namespace, then its name, against the URL's.
        if rt.namespaced and namespace and meta.get("namespace") not in (None, "", namespace):
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on the "
                "request"
            )
        if name and not meta.get("name"):
            raise errors.bad_request(
                f"the name of the object ({name} based on URL) was undeterminable: name must be "
                "provided"
            )
        name = name or meta.get("name") or ""
        if meta.get("name") and meta["name"] != name:
            raise errors.bad_request(
                f"the name of the object ({meta['name']}) does not match the name on the URL "
                f"({name})"
            )
        ns = (namespace or meta.get("namespace") or "default") if rt.namespaced else ""
        with self._lock:
            current = self._objects.get(rt.key, {}).get((ns, name))
            if current is None:
                raise errors.not_found(rt.key, name)
            old = current[0]
            if subresource == "scale":
                return self._update_scale(rt, old, obj, dry_run=dry_run, manager=field_manager)
            if meta.get("uid") not in (None, "", old["metadata"]["uid"]):
                # The body's uid is a precondition, checked by storage before anything else.
                raise errors.conflict(
                    rt.key,
                    name,
                    f"StorageError: invalid object, Code: 4, Key: {_storage_key(rt, ns, name)}, "
                    f"ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in "
                    f"precondition: {meta['uid']}, UID in object meta: {old['metadata']['uid']}",
                )
            rv = meta.get("resourceVersion")
            if isinstance(rv, str) and rv and (why := _uint64_error(rv)):
                # storage parses the version before comparing, and passes its error on as is
                raise errors.unconverted(f'strconv.ParseUint: parsing "{rv}": {why}')
            if rv and rv != old["metadata"]["resourceVersion"]:
                raise errors.stale(rt.key, name)
            if not rv and rt.crd:  # custom resources do not allow unconditional updates
                # kube-apiserver's registry names the resource, not the kind, in this one error
                raise errors.invalid(
                    rt.plural,
                    rt.group,
                    name,
                    [
                        FieldError(
                            "Invalid",
                            "metadata.resourceVersion",
                            GoLiteral("0x0"),
                            "must be specified for an update",
                        )
                    ],
                )
            if subresource == "status":
                # The rest is old's, which is never changed in place: a built-in object's
                # spec is shared, not copied (a custom resource's is pruned, into a copy).
                new = clone(old) if rt.crd else {**old, "metadata": _meta_copy(old["metadata"])}
                if "status" in obj:
                    new["status"] = obj["status"]
                else:
                    new.pop("status", None)
                if rt.crd:
                    strict = field_validation == "Strict"
                    self._prepare(
                        rt, new, strict=strict, warnings=warnings, duplicates=duplicates,
                        status_only=True,
                    )  # fmt: skip
            elif subresource == "finalize" and rt.key == "namespaces":
                new = clone(old)
                new["spec"] = obj.get("spec") or {}
            elif subresource is not None:
                raise errors.resource_not_found()
            else:
                self._check_type(rt, obj)
                if not decoded:
                    strict = field_validation == "Strict"
                    self._decode(rt, obj, strict=strict, warnings=warnings, duplicates=duplicates)
                new = obj
                new_meta = new["metadata"]
                for k in _SERVER_META:
                    if k in old["metadata"]:
                        new_meta[k] = old["metadata"][k]
                    else:
                        new_meta.pop(k, None)
                new_meta["name"] = name
                if rt.namespaced:
                    new_meta["namespace"] = ns
                if rt.status:
                    if "status" in old:
                        new["status"] = old["status"]
                    else:
                        new.pop("status", None)
                if rt.key == "namespaces":
                    new["spec"] = old.get("spec", {})
                self._prepare(
                    rt,
                    new,
                    strict=field_validation == "Strict",
                    warnings=warnings,
                    old=old,
                    duplicates=duplicates,
                    refused=refused,
                )
                self._bump_generation(rt, old, new)
            _track(rt, old, new, field_manager, subresource, applied, sent)
            return self._write_update(
                rt, old, new, dry_run=dry_run, warnings=admitted, subresource=subresource
            )

    def _bump_generation(self, rt: ResourceType, old: dict[str, Any], new: dict[str, Any]) -> None:
        if rt.key == "daemonsets.apps":
            defaults.template_generation(new, old)
        if not rt.tracks_generation:
            return
        ignored = ("metadata", "status") if rt.status else ("metadata",)
        a = {k: v for k, v in old.items() if k not in ignored}
        b = {k: v for k, v in new.items() if k not in ignored}
        if a != b:
            new["metadata"]["generation"] = old["metadata"].get("generation", 1) + 1

    def _write_update(
        self,
        rt: ResourceType,
        old: dict[str, Any],
        new: dict[str, Any],
        *,
        dry_run: bool,
        warnings: builtins.list[str] | None = None,
        subresource: str | None = None,
    ) -> Entry:
        self._admit(rt.key, "UPDATE", new, old, warnings, subresource=subresource, dry_run=dry_run)
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        if new == old:  # a no-op write keeps the resourceVersion and sends no event
            return self._objects[rt.key][self._key(rt, old)]
        if dry_run:
            return new, dumps(new)
        meta = new["metadata"]
        if (
            meta.get("deletionTimestamp")
            and not meta.get("finalizers")
            and not meta.get("deletionGracePeriodSeconds")
            and not (rt.key == "namespaces" and (new.get("spec") or {}).get("finalizers"))
        ):
            return self._commit("DELETED", rt, new, old)
        entry = self._commit("MODIFIED", rt, new, old)
        if rt.key == crds.CRD:
            crds.register(self.registry, new)
        return entry

    @staticmethod
    def _key(rt: ResourceType, obj: dict[str, Any]) -> tuple[str, str]:
        meta = obj["metadata"]
        return (meta.get("namespace", "") if rt.namespaced else "", meta["name"])

    # --- scale subresource --------------------------------------------------------------------

    def get_scale(self, resource: str, namespace: str | None, name: str) -> dict[str, Any]:
        rt = self.type_of(resource)
        return scale.scale_of(rt, self.get_entry(resource, namespace, name)[0])

    def _update_scale(
        self,
        rt: ResourceType,
        old: dict[str, Any],
        wanted: dict[str, Any],
        *,
        dry_run: bool,
        manager: str | None,
        applied: dict[str, Any] | None = None,
        force: bool = False,
    ) -> Entry:
        """A write of the Scale; an apply's (`applied`) fields owned as on the Scale."""
        entries = old["metadata"].get("managedFields") or []
        tracked = manager is not None and bool(entries or applied is not None)
        if tracked:
            assert manager is not None
            before = scale.scale_of(rt, old)["spec"].get("replicas", 0)
            after = (wanted.get("spec") or {}).get("replicas") if isinstance(wanted, dict) else None
            what = scale_fields.ScaleWrite(
                manager, applied, force, before, after if isinstance(after, int) else before
            )
            replicas = scale_fields.replicas_fields(rt.spec_replicas_path)
            version = str(old.get("apiVersion") or rt.api_version)
            entries, dropped = scale_fields.write(
                entries, replicas, rt.group, version, what, custom=bool(rt.crd)
            )
            if dropped:  # Scale's replicas, an int32, are 0 once removed
                wanted = {**wanted, "spec": {**(wanted.get("spec") or {}), "replicas": 0}}
        new = scale.scaled(rt, old, wanted)
        if rt.crd:
            self._prepare(rt, new, strict=False, warnings=None)
        self._bump_generation(rt, old, new)
        if not tracked:  # kubesim's controllers, or an object whose fields are not tracked
            _track(rt, old, new, manager, "scale")
        elif entries:
            new["metadata"]["managedFields"] = entries
        else:
            new["metadata"].pop("managedFields", None)
        obj, _ = self._write_update(rt, old, new, dry_run=dry_run, subresource="scale")
        result = scale.scale_of(rt, obj)
        return result, dumps(result)

    # --- patch --------------------------------------------------------------------------------

    def patch(
        self,
        resource: str,
        namespace: str | None,
        name: str,
        body: Any,
        **options: Unpack[PatchOptions],
    ) -> dict[str, Any]:
        return loads_object(self.patch_entry(resource, namespace, name, clone(body), **options)[1])

    def patch_entry(
        self,
        resource: str,
        namespace: str | None,
        name: str,
        body: Any,
        *,
        patch_type: str = "merge",
        subresource: str | None = None,
        dry_run: bool = False,
        field_validation: str | None = None,
        warnings: builtins.list[str] | None = None,
        decoded: bool = False,
        field_manager: str | None = None,
        force: bool = False,
        duplicates: Duplicates | None = None,
    ) -> Entry:
        """Patch; `decoded` as for create_entry (a controller's patch of what it wrote);
        `force` lets an apply take the fields it changes from their other managers."""
        rt = self.type_of(resource)
        # fields unknown or repeated go untold; what admission says, the create or update tells
        told = None if field_validation == "Ignore" else warnings
        if patch_type == "strategic" and rt.crd:
            raise errors.unsupported_media(
                [
                    "application/json-patch+json",
                    "application/merge-patch+json",
                    "application/apply-patch+yaml",
                ]
            )
        with self._lock:
            ns = (namespace or "default") if rt.namespaced else ""
            current = self._objects.get(rt.key, {}).get((ns, name))
            repeated, duplicates = (
                (duplicates, None) if patch_type == "apply" else (None, duplicates)
            )
            if current is None:
                if patch_type == "apply" and subresource is None:
                    if not isinstance(body, dict):
                        raise errors.bad_request("error decoding YAML: not an object")
                    apply_patch.check_repeated(repeated, field_validation, told)
                    return self.create_entry(
                        resource,
                        clone(body),
                        namespace=namespace,
                        dry_run=dry_run,
                        field_validation=field_validation,
                        warnings=warnings,
                        field_manager=field_manager,
                        applied=body if field_manager is not None else None,
                    )
                raise errors.not_found(rt.key, name)
            old = current[0]
            if subresource == "scale":
                base = scale.scale_of(rt, old)
            else:  # the patches build new maps and lists: the stored list is not copied
                base = {**clone({k: v for k, v in old.items() if k != "metadata"}),
                        "metadata": _meta_copy(old["metadata"])}  # fmt: skip
            managed = old["metadata"].get("managedFields")
            if patch_type == "json":
                patched = json_patch(base, body)
            elif patch_type == "merge":
                if not isinstance(body, dict):
                    raise errors.bad_request("json: cannot unmarshal into object")
                patched = merge_patch(base, body)
            elif patch_type in ("strategic", "apply"):
                if not isinstance(body, dict):
                    raise errors.bad_request("json: cannot unmarshal into object")
                if rt.crd:
                    patched = merge_patch(base, body)
                else:
                    model = (
                        "V1Scale" if subresource == "scale" else builtin_schema.MODELS.get(rt.key)
                    )
                    patched = strategic_merge(base, body, model)
            else:
                raise errors.unsupported_media(
                    [
                        "application/json-patch+json",
                        "application/merge-patch+json",
                        "application/apply-patch+yaml",
                        "application/strategic-merge-patch+json",
                    ]
                )
            if not isinstance(patched, dict):
                raise errors.bad_request("the patched object is not an object")
            if subresource == "scale" and patch_type == "apply":
                apply_patch.check_repeated(repeated, field_validation, told)
                return self._update_scale(
                    rt, old, patched, dry_run=dry_run, manager=field_manager,
                    applied=body if field_manager is not None else None, force=force,
                )  # fmt: skip
            if patch_type == "apply" and field_manager is not None:
                if subresource is None and not old["metadata"].get("managedFields"):
                    old = _before_first_apply(rt, old, patched)
                _own_applied(rt, old, patched, body, field_manager, subresource, force)
            if patch_type == "apply":
                apply_patch.check_repeated(repeated, field_validation, told)
            if not (decoded or rt.crd) and subresource is None and patch_type != "apply":
                strict = field_validation == "Strict"
                wrong_type = functools.partial(_wrong_type_in_patch, patch_type, old, body)
                refused = functools.partial(_refused_in_patch, patch_type, old, body)
                # The stored managedFields, when the patch left them, need no decoding.
                meta = patched.get("metadata")
                kept = isinstance(meta, dict) and meta.get("managedFields", 0) is managed
                if kept:
                    del patched["metadata"]["managedFields"]
                self._decode(
                    rt,
                    patched,
                    strict=strict,
                    warnings=told,
                    wrong_type=wrong_type,
                    duplicates=duplicates,
                    refused=refused,
                )
                if kept:
                    patched["metadata"]["managedFields"] = managed
                decoded = True
            pmeta = patched.setdefault("metadata", {})
            if not isinstance(pmeta, dict):
                raise errors.bad_request("metadata must be an object")
            if pmeta.get("uid") not in (None, old["metadata"]["uid"]):
                # A patch's precondition is the object it read, so a changed uid is a change.
                changed = FieldError("Invalid", "metadata.uid", pmeta["uid"], immutable.IMMUTABLE)
                raise errors.invalid(rt.kind, rt.group, name, [changed])
            if patch_type == "apply":
                pmeta.pop("resourceVersion", None)
                pmeta["resourceVersion"] = old["metadata"]["resourceVersion"]
            pmeta.setdefault("resourceVersion", old["metadata"]["resourceVersion"])
            if patch_type == "apply":
                pmeta.setdefault("name", name)
            return self.update_entry(
                resource,
                patched,
                subresource=subresource,
                namespace=ns or None,
                name=name,
                dry_run=dry_run,
                field_validation=field_validation,
                warnings=warnings,
                decoded=decoded,
                field_manager=field_manager,
                applied=body if patch_type == "apply" and field_manager is not None else None,
                duplicates=duplicates if rt.crd else None,
                refused=(
                    functools.partial(_refused_in_patch, patch_type, old, body, custom=True)
                    if rt.crd and patch_type in ("merge", "json")
                    else None
                ),
            )

    # --- delete -------------------------------------------------------------------------------

    def delete(
        self, resource: str, namespace: str | None, name: str, **options: Unpack[DeleteOptions]
    ) -> dict[str, Any]:
        """As delete_entry, but an owner's dependents are collected in the background unless
        `propagation` says otherwise (what kubectl and the clients ask for by default)."""
        options.setdefault("propagation", "Background")
        return loads_object(self.delete_entry(resource, namespace, name, **options)[0][1])

    def delete_entry(
        self,
        resource: str,
        namespace: str | None,
        name: str,
        *,
        propagation: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: dict[str, Any] | None = None,
        dry_run: bool = False,
    ) -> tuple[Entry, bool]:
        """Delete or start deleting; returns the object and whether it is gone already."""
        rt = self.type_of(resource)
        if propagation not in (None, "Background", "Foreground", "Orphan"):
            raise errors.invalid(
                "DeleteOptions",
                "",
                "",
                [
                    FieldError(
                        "Unsupported",
                        "propagationPolicy",
                        propagation,
                        'supported values: "Foreground", "Background", "Orphan", "nil"',
                    )
                ],
            )
        with self._lock:
            ns = (namespace or "default") if rt.namespaced else ""
            current = self._objects.get(rt.key, {}).get((ns, name))
            if current is None:
                raise errors.not_found(rt.key, name)
            old = current[0]
            ometa = old["metadata"]
            pre = preconditions or {}
            # rest.BeforeDelete's wording, which names the kind, not the resource
            kind = f"{rt.kind}.{rt.group}" if rt.group else rt.kind
            if pre.get("uid") and pre["uid"] != ometa["uid"]:
                raise errors.conflict(
                    kind,
                    name,
                    f"the UID in the precondition ({pre['uid']}) does not match the UID in "
                    f"record ({ometa['uid']}). The object might have been deleted and then "
                    "recreated",
                )
            if pre.get("resourceVersion") and pre["resourceVersion"] != ometa["resourceVersion"]:
                raise errors.conflict(
                    kind,
                    name,
                    f"the ResourceVersion in the precondition ({pre['resourceVersion']}) does "
                    f"not match the ResourceVersion in record ({ometa['resourceVersion']}). The "
                    "object might have been modified",
                )
            self._admit(rt.key, "DELETE", None, old, dry_run=dry_run)
            new = clone(old)
            meta = new["metadata"]
            finalizers = list(meta.get("finalizers") or [])
            if propagation == "Orphan" and "orphan" not in finalizers:
                finalizers.append("orphan")
            elif propagation == "Foreground" and "foregroundDeletion" not in finalizers:
                finalizers.append("foregroundDeletion")
            if propagation in ("Orphan", "Foreground"):
                finalizers = [
                    f
                    for f in finalizers
                    if f != ("foregroundDeletion" if propagation == "Orphan" else "orphan")
                ]
            grace = self._grace(rt, old, grace_period_seconds)
            if rt.key == "namespaces" and (new.get("spec") or {}).get("finalizers"):
                new.setdefault("status", {})["phase"] = "Terminating"
                grace = 0
                finalizers = finalizers or []
                meta.setdefault("deletionTimestamp", now())
                meta["deletionGracePeriodSeconds"] = 0
                meta["finalizers"] = finalizers
                if not finalizers:
                    meta.pop("finalizers")
                return self._write_update(rt, old, new, dry_run=dry_run), False
            if rt.key == crds.CRD and not meta.get("deletionTimestamp"):
                finalizers.append(crds.CLEANUP_FINALIZER)
            if finalizers or grace:
                if not meta.get("deletionTimestamp") and meta.get("generation", 0) > 0:
                    # As kube-apiserver's BeforeDelete and markAsDeleting: the deletion is a
                    # change a controller must observe (its observedGeneration falls behind).
                    meta["generation"] += 1
                if not meta.get("deletionTimestamp") or grace == 0:
                    meta["deletionTimestamp"] = later(grace) if grace else now()
                    meta["deletionGracePeriodSeconds"] = grace
                meta["finalizers"] = finalizers
                if not finalizers:
                    meta.pop("finalizers")
                if rt.key == crds.CRD:
                    crds.mark_terminating(new)
                entry = self._write_update(rt, old, new, dry_run=dry_run)
                return entry, entry[0]["metadata"].get("uid") not in self._uids
            if dry_run:
                return (old, current[1]), True
            return self._commit("DELETED", rt, new, old), True

    @staticmethod
    def _grace(rt: ResourceType, obj: dict[str, Any], requested: int | None) -> int:
        """Pods bound to a node terminate gracefully; everything else goes at once."""
        if rt.key != "pods":
            return 0
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
            return 0
        if requested is not None:
            return max(requested, 0)
        current = obj["metadata"].get("deletionGracePeriodSeconds")
        if current is not None:
            return int(current)
        return int(spec.get("terminationGracePeriodSeconds", 30))

    def delete_collection(
        self,
        resource: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        propagation: str | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> builtins.list[dict[str, Any]]:
        entries, _, _, _ = self.list_entries(
            resource, namespace, label_selector=label_selector, field_selector=field_selector
        )
        out = []
        for obj, _ in entries:
            meta = obj["metadata"]
            try:
                entry, _ = self.delete_entry(
                    resource,
                    meta.get("namespace"),
                    meta["name"],
                    propagation=propagation,
                    grace_period_seconds=grace_period_seconds,
                    dry_run=dry_run,
                )
            except ApiError as exc:
                if exc.code == 404:
                    continue
                raise
            out.append(loads(entry[1]))
        return out

    # --- pods/binding -------------------------------------------------------------------------

    def bind(self, namespace: str, name: str, binding: dict[str, Any]) -> dict[str, Any]:
        target = (binding.get("target") or {}).get("name")
        if not target:
            raise errors.invalid("Binding", "", name, [FieldError("Required", "target.name")])
        with self._lock:
            pod = self.get_entry("pods", namespace, name)[0]
            if (pod.get("spec") or {}).get("nodeName"):
                raise errors.conflict(
                    "pods",
                    name,
                    f'pod {name} is already assigned to node "{pod["spec"]["nodeName"]}"',
                )
            new = clone(pod)
            new["spec"]["nodeName"] = target
            conds = new.setdefault("status", {}).setdefault("conditions", [])
            conds[:] = [c for c in conds if c.get("type") != "PodScheduled"]
            conds.append(
                {
                    "type": "PodScheduled",
                    "status": "True",
                    "lastProbeTime": None,
                    "lastTransitionTime": now(),
                }
            )
            self._write_update(self.type_of("pods"), pod, new, dry_run=False, subresource="binding")
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "code": 201,
        }
