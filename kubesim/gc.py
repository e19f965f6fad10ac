"""Garbage collection, as kube-controller-manager does it: owner references, propagation
policies, namespace termination and CRD instance cleanup.

It subscribes to the store's commits, as kube-controller-manager watches the API server,
and first looks at what is there already (a store reopened from disk, the namespaces made
before it started); it runs in its own thread and acts through the public store API, so
every deletion it makes is an ordinary, watchable write.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesim import crds, namespaces
from kubesim.errors import ApiError
from kubesim.jsonutil import clone

if TYPE_CHECKING:
    from kubesim.store import Store

log = logging.getLogger(__name__)

Key = tuple[str, str, str]  # resource, namespace, name


@dataclass(frozen=True)
class Change:
    """One committed write, as the store's subscribers see it."""

    type: str  # ADDED, MODIFIED, DELETED
    resource: str
    namespace: str
    obj: dict[str, Any]


class GarbageCollector:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._queue: queue.SimpleQueue[Change | None] = queue.SimpleQueue()
        self._pending: set[Key] = set()
        self._stopped = False
        self._unsubscribe = store.subscribe(self._notify)
        self._thread = threading.Thread(target=self._run, name="kubesim-gc", daemon=True)
        self._thread.start()
        self._sync()

    def _notify(self, etype: str, resource: str, obj: dict[str, Any]) -> None:
        namespace = (obj.get("metadata") or {}).get("namespace", "")
        self._queue.put(Change(etype, resource, namespace, obj))

    def _sync(self) -> None:
        """What was committed before we subscribed: each namespace gets its default objects,
        and objects already being deleted are finished."""
        for ns in self.store.list("namespaces"):  # a terminating one is finished too
            self._queue.put(Change("ADDED", "namespaces", "", ns))

    def stop(self) -> None:
        self._unsubscribe()
        self._stopped = True
        self._queue.put(None)
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stopped:
            try:
                ev = self._queue.get(timeout=0.5)
            except queue.Empty:
                ev = None
                self._revisit()
                continue
            if ev is None:
                return
            try:
                self._handle(ev)
                if self._queue.empty():
                    self._revisit()
            except Exception:
                if not self.store.closed:
                    log.exception("kubesim gc failed on %s %s", ev.type, ev.resource)

    def _revisit(self) -> None:
        for key in list(self._pending):
            try:
                self._process(*key)
            except ApiError as exc:
                if exc.code == 404:
                    self._pending.discard(key)
            except Exception:
                if self.store.closed:
                    return
                log.exception("kubesim gc failed on %s", key)

    def _handle(self, ev: Change) -> None:
        meta = ev.obj["metadata"]
        if ev.type == "DELETED":
            self._pending.discard((ev.resource, ev.namespace, meta["name"]))
            self._collect_dependents(meta["uid"])
            for ref in meta.get("ownerReferences") or []:
                owner = self.store.get_by_uid(ref.get("uid"))
                if owner is not None and owner["metadata"].get("deletionTimestamp"):
                    self._revisit_obj(owner)
            if ev.namespace:
                ns = self.store.get_by_uid(self._ns_uid(ev.namespace))
                if ns is not None and ns["metadata"].get("deletionTimestamp"):
                    self._pending.add(("namespaces", "", ev.namespace))
            return
        if meta.get("deletionTimestamp"):
            self._pending.add((ev.resource, ev.namespace, meta["name"]))
            try:
                self._process(ev.resource, ev.namespace, meta["name"])
            except ApiError as exc:  # gone meanwhile: nothing left to move on
                if exc.code != 404:
                    raise
        elif ev.type == "ADDED" and meta.get("ownerReferences"):
            self._check_dangling(ev.resource, ev.namespace, ev.obj)
        elif ev.type == "ADDED" and ev.resource == "namespaces":
            namespaces.populate(self.store, meta["name"])

    def _ns_uid(self, namespace: str) -> str:
        try:
            uid: str = self.store.get_entry("namespaces", None, namespace)[0]["metadata"]["uid"]
            return uid
        except ApiError:
            return ""

    def _revisit_obj(self, obj: dict[str, Any]) -> None:
        where = self.store._uids.get(obj["metadata"]["uid"])
        if where:
            self._pending.add(where)

    def _check_dangling(self, resource: str, namespace: str, obj: dict[str, Any]) -> None:
        refs = obj["metadata"].get("ownerReferences") or []
        if any(self.store.get_by_uid(r.get("uid")) is not None for r in refs):
            return
        with contextlib.suppress(ApiError):
            self.store.delete(
                resource, namespace or None, obj["metadata"]["name"], propagation="Background"
            )

    def _collect_dependents(self, owner_uid: str, *, propagation: str = "Background") -> None:
        for resource, ns, name in self.store.dependents_of(owner_uid):
            try:
                obj = self.store.get_entry(resource, ns or None, name)[0]
            except ApiError:
                continue
            refs = obj["metadata"].get("ownerReferences") or []
            alive = [
                r for r in refs if r.get("uid") != owner_uid and self.store.get_by_uid(r.get("uid"))
            ]
            if alive:
                self._strip_owner(resource, ns, name, owner_uid)
            elif not obj["metadata"].get("deletionTimestamp"):
                with contextlib.suppress(ApiError):
                    self.store.delete(resource, ns or None, name, propagation=propagation)

    def _modify(self, resource: str, ns: str, name: str, change: Any) -> None:
        """Apply `change(obj)` with optimistic concurrency, retrying on conflicts."""
        for _ in range(10):
            try:
                obj = clone(self.store.get_entry(resource, ns or None, name)[0])
                change(obj)
                self.store.update_entry(resource, obj, namespace=ns or None, name=name)
                return
            except ApiError as exc:
                if exc.code == 404:
                    return
                if exc.code != 409:
                    raise

    def _strip_owner(self, resource: str, ns: str, name: str, owner_uid: str) -> None:
        def change(obj: dict[str, Any]) -> None:
            refs = [
                r for r in obj["metadata"].get("ownerReferences") or [] if r.get("uid") != owner_uid
            ]
            if refs:
                obj["metadata"]["ownerReferences"] = refs
            else:
                obj["metadata"].pop("ownerReferences", None)

        self._modify(resource, ns, name, change)

    def _drop_finalizer(self, resource: str, ns: str, name: str, finalizer: str) -> None:
        def change(obj: dict[str, Any]) -> None:
            fins = [f for f in obj["metadata"].get("finalizers") or [] if f != finalizer]
            if fins:
                obj["metadata"]["finalizers"] = fins
            else:
                obj["metadata"].pop("finalizers", None)

        self._modify(resource, ns, name, change)

    def _process(self, resource: str, ns: str, name: str) -> None:
        """Move a terminating object on: orphan, foreground, namespace or CRD cleanup."""
        obj = self.store.get_entry(resource, ns or None, name)[0]
        meta = obj["metadata"]
        if not meta.get("deletionTimestamp"):
            self._pending.discard((resource, ns, name))
            return
        finalizers = meta.get("finalizers") or []
        uid = meta["uid"]
        if "orphan" in finalizers:
            for dres, dns, dname in self.store.dependents_of(uid):
                self._strip_owner(dres, dns, dname, uid)
            self._drop_finalizer(resource, ns, name, "orphan")
        elif "foregroundDeletion" in finalizers:
            blocking = 0
            for dres, dns, dname in self.store.dependents_of(uid):
                try:
                    dep = self.store.get_entry(dres, dns or None, dname)[0]
                except ApiError:
                    continue
                if not dep["metadata"].get("deletionTimestamp"):
                    with contextlib.suppress(ApiError):
                        self.store.delete(dres, dns or None, dname, propagation="Foreground")
                if any(
                    r.get("uid") == uid and r.get("blockOwnerDeletion")
                    for r in dep["metadata"].get("ownerReferences") or []
                ):
                    blocking += 1
            if not blocking:
                self._drop_finalizer(resource, ns, name, "foregroundDeletion")
        elif resource == "namespaces":
            self._terminate_namespace(name, obj)
        elif resource == crds.CRD and crds.CLEANUP_FINALIZER in finalizers:
            key = crds.resource_key(obj)
            if self.store.registry.get(key) is None:
                remaining = []
            else:
                for item in self.store.list(key):
                    with contextlib.suppress(ApiError):
                        self.store.delete(
                            key, item["metadata"].get("namespace"), item["metadata"]["name"]
                        )
                remaining = self.store.list(key)
            if not remaining:
                self._drop_finalizer(resource, ns, name, crds.CLEANUP_FINALIZER)
        else:
            self._pending.discard((resource, ns, name))

    def _terminate_namespace(self, name: str, ns_obj: dict[str, Any]) -> None:
        left = 0
        for rt in self.store.registry.all():
            if not rt.namespaced:
                continue
            for obj, _ in self.store.list_entries(rt.key, name)[0]:
                left += 1
                if not obj["metadata"].get("deletionTimestamp"):
                    with contextlib.suppress(ApiError):
                        self.store.delete(
                            rt.key, name, obj["metadata"]["name"], propagation="Background"
                        )
        if left:
            return
        spec_fins = (ns_obj.get("spec") or {}).get("finalizers") or []
        if "kubernetes" in spec_fins:
            finalize = clone(ns_obj)
            finalize["spec"]["finalizers"] = [f for f in spec_fins if f != "kubernetes"]
            with contextlib.suppress(ApiError):
                self.store.update_entry("namespaces", finalize, name=name, subresource="finalize")
