"""The watcher: lists and watches the registered kinds, keeps the mirror, queues keys.

One thread per watched kind (and namespace) reads its watch stream; a single writer
(the caller's thread) applies what they read to the mirror in batches — one transaction
per batch — and only then queues the keys, so a reconcile always finds the mirror at
least as new as the event that caused it.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from controllers.base import EVENT, REPLICASET, Body, Controller, Key, Kind, TemporaryError
from controllers.kube import ApiKube, Gone
from controllers.registry import watched_kinds
from opsboard.engine.mapping import keys_for
from opsboard.mirror.writer import (
    Change,
    kind_watch_resume_point,
    kind_watch_save,
    mirror_apply,
    mirror_relist,
)

log = logging.getLogger(__name__)
# Mirrored for the UI (owner trees, an object's Events), and to map Pods to their owners.
MIRROR_ONLY = (REPLICASET, EVENT)
BATCH = 500
WATCH_TIMEOUT = 300  # seconds per watch request; the server ends it, we resume


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


Enqueue = Callable[..., Any]


class Watcher:
    def __init__(
        self,
        *,
        kube: ApiKube,
        controllers: Sequence[Controller],
        enqueue: Enqueue,
        namespaces: Sequence[str] = (),
    ) -> None:
        self.kube = kube
        self.controllers = list(controllers)
        self.enqueue = enqueue
        self.namespaces = list(namespaces)
        kinds = watched_kinds(self.controllers)
        self.kinds = kinds + [k for k in MIRROR_ONLY if k not in kinds]
        self.inbox: queue.Queue[Listed | Streamed] = queue.Queue(maxsize=50_000)
        self.stop = threading.Event()

    # -- readers -------------------------------------------------------------------------

    def _stream(self, kind: Kind, namespace: str) -> None:
        # A watch of all namespaces resumes where the last watcher stopped; else list first.
        version = "" if namespace else kind_watch_resume_point(kind=kind)
        delay = 0.1
        while not self.stop.is_set():
            try:
                if not version:
                    items, version = self.kube.list(kind, namespace)
                    self.inbox.put(Listed(kind, namespace, items, version))
                for type_, body in self.kube.watch(
                    kind, namespace, resource_version=version, timeout_seconds=WATCH_TIMEOUT
                ):
                    if self.stop.is_set():
                        return
                    version = str(body["metadata"].get("resourceVersion") or version)
                    self.inbox.put(Streamed(kind, type_, body))
                    delay = 0.1
            except Gone:
                log.info("Watch of %s expired (410 Gone): listing again", kind)
                version = ""
            except (TemporaryError, ValueError, KeyError) as exc:
                log.warning("Watch of %s failed (%s); reconnecting in %.1fs", kind, exc, delay)
                self.stop.wait(delay)
                delay = min(delay * 2, 30.0)

    # -- the writer ----------------------------------------------------------------------

    def _drain(self, first: Listed | Streamed) -> list[Listed | Streamed]:
        batch = [first]
        while len(batch) < BATCH:
            try:
                batch.append(self.inbox.get_nowait())
            except queue.Empty:
                break
        return batch

    def _apply(self, batch: list[Listed | Streamed]) -> None:
        changes: list[Change] = []
        versions: dict[Kind, tuple[str, bool, bool]] = {}  # kind → (rv, listed, event)
        run: list[Streamed] = []

        def flush() -> None:
            if run:
                kind = run[0].kind
                events = [(item.type, item.body) for item in run]
                changes.extend(mirror_apply(kind=kind, events=events))
                run.clear()

        for item in batch:
            if isinstance(item, Listed):
                flush()
                namespaces = [item.namespace] if item.namespace else []
                changes.extend(
                    mirror_relist(kind=item.kind, items=item.items, namespaces=namespaces)
                )
                if not item.namespace:
                    versions[item.kind] = (item.resource_version, True, False)
                continue
            version = str(item.body["metadata"].get("resourceVersion") or "")
            if not self.namespaces:
                _, listed, _ = versions.get(item.kind, ("", False, False))
                versions[item.kind] = (version, listed, item.type != "BOOKMARK")
            if item.type == "BOOKMARK":
                continue
            if run and run[0].kind != item.kind:
                flush()
            run.append(item)
        flush()
        for kind, (version, listed, event) in versions.items():
            kind_watch_save(kind=kind, resource_version=version, listed=listed, event=event)
        for key, detail in keys_for(changes, self.controllers):
            self._enqueue(key, detail)

    def _enqueue(self, key: Key, detail: str) -> None:
        try:
            self.enqueue(key=key, trigger="event", detail=detail)
        except Exception:  # Redis down: the resync after it returns catches this key up
            log.warning("Could not queue %s", key, exc_info=True)

    def run(self) -> None:
        """Watches until `stop` is set. Call from the thread that may write the mirror."""
        for kind in self.kinds:
            for namespace in (self.namespaces if kind.namespaced else []) or [""]:
                threading.Thread(
                    target=self._stream, args=(kind, namespace), name=f"watch {kind}", daemon=True
                ).start()
        while not self.stop.is_set():
            try:
                first = self.inbox.get(timeout=0.5)
            except queue.Empty:
                continue
            self._apply(self._drain(first))
