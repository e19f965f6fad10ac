"""Watch streams: initial state, events from a resourceVersion, bookmarks, 410 Expired.

Every commit appends to the store's bounded event window and wakes the watchers; each
stream filters the window by namespace and selectors, turning selector transitions into
ADDED/DELETED the way kube-apiserver's watch cache does.
"""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, Any

from kubesim import errors, query_options, tables
from kubesim.errors import ApiError
from kubesim.jsonutil import dumps
from kubesim.selectors import parse_fields, parse_labels

if TYPE_CHECKING:
    from kubesim.handler import Handler
    from kubesim.routing import Target

BOOKMARK_INTERVAL = 5.0  # seconds; kube-apiserver sends one about every minute
LISTING_CHUNK = 256 * 1024  # bytes of a watch's initial ADDED events per write, at most


def _event(kind: str, obj: bytes) -> bytes:
    return b'{"type":"' + kind.encode() + b'","object":' + obj + b"}\n"


def serve_watch(h: Handler, t: Target) -> None:
    store, faults, q = h.sim.store, h.sim.faults, h.query
    rt = t.rt
    lmatch = parse_labels(q.get("labelSelector"))
    fmatch = parse_fields(rt.key, q.get("fieldSelector"), custom=rt.crd is not None)
    rv_param = q.get("resourceVersion") or ""
    if rv_param and not rv_param.isdigit():
        raise errors.bad_request(f'invalid resource version: "{rv_param}"')
    timeout, _ = query_options.list_ints(q)
    # as the watch handler: no timeout, or 0, is the server's random one; a negative one is over
    deadline = time.monotonic() + (timeout or random.uniform(1800, 3600))
    bookmarks = query_options.bool_option(q, "allowWatchBookmarks")
    if q.get("sendInitialEvents"):
        # Streaming lists need the WatchList feature gate, off by default on v1.28.
        raise errors.invalid(
            "ListOptions",
            "meta.k8s.io",
            "",
            [
                errors.FieldError(
                    "Forbidden",
                    "sendInitialEvents",
                    detail="sendInitialEvents is forbidden for watch unless the WatchList "
                    "feature gate is enabled",
                )
            ],
        )
    if timeout is not None and timeout < 0 and _over_before_it_starts(h, rv_param):
        return
    accept = h.headers.get("Accept", "")
    as_table = "as=Table" in accept
    want_version = rt.api_version_for(t.version)
    namespace = t.namespace or ""
    generation = faults.watch_generation
    changed = store.changed_of(rt.key)  # notified for this resource's changes only

    def matches(obj: dict[str, Any]) -> bool:
        if lmatch and not lmatch((obj.get("metadata") or {}).get("labels") or {}):
            return False
        return not (fmatch and not fmatch(obj))

    def encode(obj: dict[str, Any], data: bytes) -> bytes:
        if as_table:
            return dumps(
                tables.table(rt, t.version, [obj], include=q.get("includeObject", "Metadata"))
            )
        if obj.get("apiVersion") != want_version:
            return dumps(obj | {"apiVersion": want_version})
        return data

    def bookmark(rv: int) -> bytes:
        meta: dict[str, Any] = {"resourceVersion": str(rv), "creationTimestamp": None}
        return _event(
            "BOOKMARK", dumps({"kind": rt.kind, "apiVersion": want_version, "metadata": meta})
        )

    def expired(message: str) -> bytes:
        return _event("ERROR", dumps(errors.gone(message).status()))

    if t.name:  # /watch/namespaces/ns/pods/name addresses one object
        name_match = fmatch

        def fmatch(o: dict[str, Any], _n: str = t.name, _f: Any = name_match) -> bool:
            return o["metadata"]["name"] == _n and (_f is None or _f(o))

    with h.streamed():
        if not rv_param or rv_param == "0":
            entries, last, _, _ = store.list_entries(rt.key, t.namespace or None)
            listing: list[bytes] = []  # bounded writes: a listing can be tens of MB
            size = 0
            for obj, data in entries:
                if matches(obj):
                    listing.append(_event("ADDED", encode(obj, data)))
                    size += len(listing[-1])
                    if size >= LISTING_CHUNK:
                        h.write_chunk(b"".join(listing))
                        listing, size = [], 0
            if listing:
                h.write_chunk(b"".join(listing))
        else:
            last = int(rv_param)
            if faults.take_expired_watch(rt.key, t.namespace):
                h.write_chunk(expired(f"too old resource version: {last} ({store.floor + 1})"))
                return
        # As the watch cache does: one more bookmark 2 s before the watch times out.
        pre_timeout: float | None = deadline - 2.0

        def next_bookmark_after(now: float) -> float:
            upcoming = now + BOOKMARK_INTERVAL
            if pre_timeout is not None and now < pre_timeout < upcoming:
                return pre_timeout
            return upcoming

        next_bookmark = next_bookmark_after(time.monotonic())
        while True:
            try:
                events = store.events_after(last)
            except ApiError as exc:
                h.write_chunk(_event("ERROR", dumps(exc.status())))
                break
            out: list[bytes] = []  # one write per wake-up: each write is a TLS record
            for ev in events:
                last = ev.rv
                if ev.resource != rt.key or (namespace and ev.namespace != namespace):
                    continue
                obj = ev.obj  # once: an older event decodes it (store.Event)
                now_in = matches(obj)
                kind = ev.type
                if kind == "MODIFIED" and (lmatch or fmatch):
                    prev = ev.prev
                    was_in = prev is not None and matches(prev)
                    if now_in and not was_in:
                        kind = "ADDED"
                    elif was_in and not now_in:
                        kind, now_in = "DELETED", True
                if now_in:
                    out.append(_event(kind, encode(obj, ev.data)))
            if out:
                h.write_chunk(b"".join(out))
            now = time.monotonic()
            if now >= deadline or store.closed or h.sim.stopping:
                break
            if faults.watch_closed(generation, rt.key):
                break
            if rt.crd and store.registry.get(rt.key) is None:  # its CRD was deleted
                break
            if bookmarks and now >= next_bookmark:
                h.write_chunk(bookmark(last))
                next_bookmark = next_bookmark_after(now)
            with changed:
                if store.resource_version <= last:
                    changed.wait(min(1.0, deadline - now, max(next_bookmark - now, 0.01)))


def _over_before_it_starts(h: Handler, rv_param: str) -> bool:
    """A negative timeoutSeconds: the watch's context has expired before the watch cache
    serves it. Without a resourceVersion, or one newer than the store's, the stream is
    empty; from one the cache still holds (0 included), waiting for it fails with the
    context's 503; an older one is the usual 410 ERROR event (False: served as usual)."""
    store = h.sim.store
    rv = int(rv_param) if rv_param else None
    if rv is not None and rv < store.floor and rv != 0:
        return False
    if rv is not None and rv <= store.resource_version:
        raise errors.unavailable("context deadline exceeded")
    h.start_stream()
    h.end_stream()
    return True
