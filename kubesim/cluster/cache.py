"""The controllers' view of the store, kept current from its watch events.

Like an informer cache: controllers read here (never list the store in a
loop) and writes are applied at once from the store's answer, so a second
reconcile never acts on a stale view of its own work. resourceVersions are
compared so that a late event never replaces a newer object, and a deleted
object is never brought back by a late write.
"""

from __future__ import annotations

import builtins
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

Obj = dict[str, Any]
_TOMBSTONES = 20_000


def rv_of(obj: Obj) -> int:
    try:
        return int(obj.get("metadata", {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


def controller_uid(obj: Obj) -> str | None:
    for ref in obj.get("metadata", {}).get("ownerReferences") or []:
        if ref.get("controller"):
            uid: str | None = ref.get("uid")
            return uid
    return None


class Cache:
    def __init__(self, resources: list[str]) -> None:
        self._lock = threading.RLock()
        self._objs: dict[str, dict[str, dict[str, Obj]]] = {r: {} for r in resources}
        self._owned: dict[str, dict[str, set[tuple[str, str]]]] = {r: {} for r in resources}
        self._on_node: dict[str, set[tuple[str, str]]] = {}
        self._orphans: dict[str, dict[str, set[str]]] = {r: {} for r in resources}
        self._tombstones: OrderedDict[tuple[str, str, str], int] = OrderedDict()
        # Told of every change, whether it came from a watch event or from our own write.
        self.listener: Callable[[str, Obj | None, Obj | None], None] | None = None

    def get(self, resource: str, namespace: str | None, name: str) -> Obj | None:
        with self._lock:
            return self._objs[resource].get(namespace or "", {}).get(name)

    def list(self, resource: str, namespace: str | None = None) -> builtins.list[Obj]:
        with self._lock:
            spaces = self._objs[resource]
            if namespace is not None:
                return list(spaces.get(namespace, {}).values())
            return [o for objs in spaces.values() for o in objs.values()]

    def owned(self, resource: str, owner_uid: str) -> builtins.list[Obj]:
        with self._lock:
            keys = self._owned[resource].get(owner_uid, ())
            return [self._objs[resource][ns][name] for ns, name in keys]

    def orphans(self, resource: str, namespace: str) -> builtins.list[Obj]:
        """Objects of the namespace that no controller owns."""
        with self._lock:
            objs = self._objs[resource].get(namespace, {})
            return [objs[name] for name in self._orphans[resource].get(namespace, ())]

    def pods_on(self, node: str) -> builtins.list[Obj]:
        with self._lock:
            return [self._objs["pods"][ns][name] for ns, name in self._on_node.get(node, ())]

    def count_on(self, node: str) -> int:
        with self._lock:
            return len(self._on_node.get(node, ()))

    def apply(self, event_type: str, resource: str, obj: Obj) -> tuple[Obj | None, Obj | None]:
        """Returns (old, new) when the view changed, else (None, None)."""
        old, new = self._apply(event_type, resource, obj)
        if (old is not None or new is not None) and self.listener is not None:
            self.listener(resource, old, new)
        return old, new

    def _apply(self, event_type: str, resource: str, obj: Obj) -> tuple[Obj | None, Obj | None]:
        meta = obj.get("metadata", {})
        ns, name, rv = meta.get("namespace") or "", meta.get("name", ""), rv_of(obj)
        with self._lock:
            if resource not in self._objs:
                return None, None
            old = self._objs[resource].get(ns, {}).get(name)
            tomb = self._tombstones.get((resource, ns, name))
            if event_type == "DELETED":
                if old is None or (rv and rv < rv_of(old)):
                    return None, None
                self._remove(resource, old)
                self._bury(resource, ns, name, max(rv, rv_of(old)))
                return old, None
            if (old is not None and rv <= rv_of(old)) or (tomb is not None and rv <= tomb):
                return None, None
            if old is not None:
                self._remove(resource, old)
            self._add(resource, obj)
            return old, obj

    def forget(self, resource: str, obj: Obj) -> tuple[Obj | None, Obj | None]:
        """After a delete we made: hide the object until its DELETED event confirms it."""
        return self.apply("DELETED", resource, obj)

    def _bury(self, resource: str, ns: str, name: str, rv: int) -> None:
        self._tombstones[(resource, ns, name)] = rv
        self._tombstones.move_to_end((resource, ns, name))
        while len(self._tombstones) > _TOMBSTONES:
            self._tombstones.popitem(last=False)

    def _add(self, resource: str, obj: Obj) -> None:
        meta = obj["metadata"]
        key = (meta.get("namespace") or "", meta["name"])
        self._objs[resource].setdefault(key[0], {})[key[1]] = obj
        if owner := controller_uid(obj):
            self._owned[resource].setdefault(owner, set()).add(key)
        else:
            self._orphans[resource].setdefault(key[0], set()).add(key[1])
        if resource == "pods" and (node := obj.get("spec", {}).get("nodeName")):
            self._on_node.setdefault(node, set()).add(key)

    def _remove(self, resource: str, obj: Obj) -> None:
        meta = obj["metadata"]
        key = (meta.get("namespace") or "", meta["name"])
        objs = self._objs[resource].get(key[0], {})
        objs.pop(key[1], None)
        if not objs:
            self._objs[resource].pop(key[0], None)
        if (owner := controller_uid(obj)) and (keys := self._owned[resource].get(owner)):
            keys.discard(key)
            if not keys:
                del self._owned[resource][owner]
        elif owner is None and (names := self._orphans[resource].get(key[0])):
            names.discard(key[1])
            if not names:
                del self._orphans[resource][key[0]]
        if resource == "pods" and (node := obj.get("spec", {}).get("nodeName")):
            self._on_node.get(node, set()).discard(key)
