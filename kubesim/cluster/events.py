"""Events as the real components post them, aggregated like the client-go recorder.

The same involved object, reason, message and source within the aggregation
window bump `count` and `lastTimestamp` of one Event instead of creating a
new one. Like kube-apiserver's --event-ttl, an Event goes an hour after its
last update.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict, deque
from typing import Any

from kubesim.cluster import names
from kubesim.cluster.api import is_status_error

Obj = dict[str, Any]
log = logging.getLogger(__name__)

_MEMORY = 4096


class Recorder:
    def __init__(self, store: Any, ttl: float = 3600.0) -> None:
        self._store = store
        self._ttl = ttl
        self._lock = threading.Lock()
        self._seen: OrderedDict[tuple[str, ...], tuple[str, str, int]] = OrderedDict()
        # (expiry, namespace, name) in write order; _expiry has each event's latest expiry.
        self._written: deque[tuple[float, str, str]] = deque()
        self._expiry: dict[tuple[str, str], float] = {}

    def expire(self) -> float:
        """Deletes the events past their TTL; returns the seconds until the next one is due."""
        now = time.monotonic()
        while True:
            with self._lock:
                if not self._written or self._written[0][0] > now:
                    return self._written[0][0] - now if self._written else self._ttl
                expires, namespace, name = self._written.popleft()
                if self._expiry.get((namespace, name)) != expires:
                    continue  # updated since: a later entry carries its expiry
                del self._expiry[(namespace, name)]
            try:
                self._store.delete("events", namespace, name)
            except Exception as exc:
                if not is_status_error(exc, 404):
                    raise

    def normal(self, obj: Obj, reason: str, message: str, component: str, **kw: str) -> None:
        self.post(obj, "Normal", reason, message, component, **kw)

    def warning(self, obj: Obj, reason: str, message: str, component: str, **kw: str) -> None:
        self.post(obj, "Warning", reason, message, component, **kw)

    def post(
        self,
        obj: Obj,
        type_: str,
        reason: str,
        message: str,
        component: str,
        *,
        host: str = "",
        field_path: str = "",
    ) -> None:
        """Never raises: an Event that cannot be written must not stop a controller."""
        try:
            self._post(obj, type_, reason, message, component, host, field_path)
        except Exception as exc:
            if is_status_error(exc, 403) or is_status_error(exc, 404):
                return  # the namespace is going away; a real recorder drops these too
            log.warning(
                "Could not post event %s for %s", reason, obj["metadata"].get("name"), exc_info=True
            )

    def _post(
        self,
        obj: Obj,
        type_: str,
        reason: str,
        message: str,
        component: str,
        host: str,
        field_path: str,
    ) -> None:
        meta = obj["metadata"]
        # Cluster-scoped objects (nodes) have their events in "default", as on a real cluster.
        namespace = meta.get("namespace") or "default"
        key = (
            namespace,
            meta.get("uid", ""),
            meta["name"],
            field_path,
            type_,
            reason,
            message,
            component,
            host,
        )
        stamp = names.rfc3339()
        with self._lock:
            seen = self._seen.get(key)
        if seen is not None:
            ns, name, count = seen
            try:
                self._store.patch_entry(
                    "events",
                    ns,
                    name,
                    {"count": count + 1, "lastTimestamp": stamp},
                    decoded=True,
                )
            except Exception as exc:
                if not is_status_error(exc, 404):
                    raise
            else:
                self._remember(key, (ns, name, count + 1))
                return
        event: Obj = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{meta['name']}.{time.time_ns():x}", "namespace": namespace},
            "involvedObject": _reference(obj, field_path),
            "reason": reason,
            "message": message,
            "type": type_,
            "source": {"component": component, **({"host": host} if host else {})},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "eventTime": None,
            "reportingComponent": component,
            "reportingInstance": host,
        }
        # The entry calls: the store takes `event` as it is (built here, never used again)
        # and nothing is decoded back: Events are nearly half of what a new pod makes the
        # cluster write.
        self._store.create_entry("events", event, namespace=namespace, decoded=True)
        self._remember(key, (namespace, event["metadata"]["name"], 1))

    def _remember(self, key: tuple[str, ...], value: tuple[str, str, int]) -> None:
        expires = time.monotonic() + self._ttl
        with self._lock:
            self._written.append((expires, value[0], value[1]))
            self._expiry[(value[0], value[1])] = expires
            self._seen[key] = value
            self._seen.move_to_end(key)
            while len(self._seen) > _MEMORY:
                self._seen.popitem(last=False)


def _reference(obj: Obj, field_path: str) -> Obj:
    meta = obj["metadata"]
    ref = {
        "kind": obj.get("kind"),
        "namespace": meta.get("namespace"),
        "name": meta["name"],
        "uid": meta.get("uid"),
        "apiVersion": obj.get("apiVersion"),
        "resourceVersion": meta.get("resourceVersion"),
        "fieldPath": field_path,
    }
    return {k: v for k, v in ref.items() if v}
