"""Writes through the store, applied to the controllers' cache at once.

What a write returns, and what the cache holds, is the store's own object as committed
(decoding a copy of each was a large share of kubesim's CPU): read it, never change it;
write a changed copy ({**obj, "status": ...}). What the controllers write is built from
objects the store already decoded, so it is not decoded again (the store's `decoded`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesim.cluster.cache import Cache
from kubesim.jsonutil import clone
from kubesim.store import update_copy

if TYPE_CHECKING:
    from kubesim.store import Store

Obj = dict[str, Any]


def is_status_error(exc: BaseException, code: int) -> bool:
    return getattr(exc, "code", None) == code or getattr(exc, "status", None) == code


class Api:
    def __init__(self, store: Store, cache: Cache) -> None:
        self.store = store
        self._cache = cache

    def create(self, resource: str, obj: Obj) -> Obj:
        namespace = obj.get("metadata", {}).get("namespace")
        created, _ = self.store.create_entry(
            resource, clone(obj), namespace=namespace, decoded=True
        )
        self._cache.apply("MODIFIED", resource, created)
        return created

    def update(self, resource: str, obj: Obj, *, subresource: str | None = None) -> Obj:
        body = update_copy(obj, subresource)
        updated, _ = self.store.update_entry(resource, body, subresource=subresource, decoded=True)
        self._cache.apply("MODIFIED", resource, updated)
        return updated

    def patch(
        self,
        resource: str,
        namespace: str | None,
        name: str,
        body: Obj,
        *,
        subresource: str | None = None,
    ) -> Obj:
        patched, _ = self.store.patch_entry(
            resource, namespace, name, clone(body), subresource=subresource, decoded=True
        )
        self._cache.apply("MODIFIED", resource, patched)
        return patched

    def refresh(self, resource: str, namespace: str | None, name: str) -> Obj:
        """Reads one object from the store into the cache (after a write that returns no object)."""
        obj = self.store.get(resource, namespace, name)
        self._cache.apply("MODIFIED", resource, obj)
        return obj

    def delete(
        self,
        resource: str,
        namespace: str | None,
        name: str,
        *,
        grace_period_seconds: int | None = None,
    ) -> None:
        """Deletes, treating NotFound as done (someone else got there first)."""
        try:
            gone = self.store.delete(
                resource, namespace, name, grace_period_seconds=grace_period_seconds
            )
        except Exception as exc:
            if is_status_error(exc, 404):
                return
            raise
        if isinstance(gone, dict) and gone.get("metadata", {}).get("name") == name:
            if gone["metadata"].get("deletionTimestamp") and self._still_there(
                resource, namespace, name
            ):
                self._cache.apply("MODIFIED", resource, gone)
            else:
                self._cache.forget(resource, gone)

    def _still_there(self, resource: str, namespace: str | None, name: str) -> bool:
        try:
            self.store.get(resource, namespace, name)
        except Exception as exc:
            if is_status_error(exc, 404):
                return False
            raise
        return True
