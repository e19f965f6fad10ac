"""A run's own writes to its children, so that their echo does not wake its key again.

A reconcile that creates its Deployment saw, a moment later, the watch's ADDED of that
very Deployment wake its CR for a run that found nothing to do: a third of the runs of a
cold start on a real cluster. Each create or patch of a child returns the object at the
resourceVersion the server gave it; the run records that version (`OwnWrites`), and the
watcher drops a change of the child at exactly that version (`echoes_of`). The run that
wrote it went on from the server's reply, so its echo tells the controller nothing new.

A change at any other version (the child's own controller, a person, a deletion) wakes the
key as before. An echo the watcher maps before the run has recorded it (rare: a batch of
owned changes waits up to OPSBOARD_OWNED_LINGER_SECONDS) costs a run, as it always did; a
record lost with Redis costs the same. Writes of the primary object itself are not
recorded: a run that changes its own CR's spec may count on the run that follows.

The same records tell a run whether its copy of a child shows the last own write of it
(`shows_own_write`): if so, a patch computed from that copy needs no precondition against
the writes of others since (`Kube.patch`'s conflict_on="own").
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import redis

from controllers.base import Body, ConflictOn, Kind, Manifest
from controllers.kube import ApiKube
from opsboard.engine import own_status
from opsboard.engine.queue import connection
from opsboard.mirror.writer import Change, version_number

log = logging.getLogger(__name__)
TTL_MS = 60_000  # far longer than any watch's delay; a record is a few dozen bytes
PREFIX = "opsboard:echo:"


def record_name(kind: Kind, namespace: str, name: str) -> str:
    """The Redis key of the record of the last own write of an object."""
    return f"{PREFIX}{kind.api_version}/{kind.kind}/{namespace}/{name}"


class OwnWrites:
    """The `controllers.base.Kube` a run writes through: the process's ApiKube, recording
    the version of each child it creates or patches."""

    def __init__(self, kube: ApiKube, primary: Kind) -> None:
        self.kube = kube
        self.primary = primary
        self.status_written = ""  # the version the run's last status write made

    def get(self, kind: Kind, namespace: str, name: str) -> Body | None:
        return self.kube.get(kind, namespace, name)

    def create(self, kind: Kind, body: Manifest) -> Body:
        return self._record(kind, self.kube.create(kind, body))

    def patch(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        patch: Body,
        *,
        resource_version: str | None = None,
        conflict_on: ConflictOn = "any",
    ) -> Body:
        return self.begin_patch(
            kind, namespace, name, patch, resource_version=resource_version, conflict_on=conflict_on
        )()

    def begin_patch(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        patch: Body,
        *,
        resource_version: str | None = None,
        conflict_on: ConflictOn = "any",
    ) -> Callable[[], Body]:
        if (
            resource_version
            and conflict_on == "own"
            and shows_own_write(kind, namespace, name, resource_version)
        ):
            resource_version = None  # what the copy lacks is others' writes only
        pending = self.kube.begin_patch(
            kind, namespace, name, patch, resource_version=resource_version
        )
        return lambda: self._record(kind, pending())

    def patch_status(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        status: Body,
        *,
        resource_version: str | None = None,
    ) -> Body:
        return self.begin_patch_status(
            kind, namespace, name, status, resource_version=resource_version
        )()

    def begin_patch_status(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        status: Body,
        *,
        resource_version: str | None = None,
    ) -> Callable[[], Body]:
        pending = self.kube.begin_patch_status(
            kind, namespace, name, status, resource_version=resource_version
        )
        return lambda: self._own_status(kind, pending())

    def _own_status(self, kind: Kind, written: Body) -> Body:
        # A status write wakes nobody anyway (the primary's status-only changes are dropped),
        # but the key's next run may come before the mirror has it (own_status).
        if kind == self.primary:
            own_status.remember(kind, written)
            self.status_written = str(written.get("metadata", {}).get("resourceVersion") or "")
        return written

    def delete(self, kind: Kind, namespace: str, name: str) -> None:
        self.kube.delete(kind, namespace, name)

    def _record(self, kind: Kind, written: Body) -> Body:
        meta = written.get("metadata") or {}
        version = meta.get("resourceVersion")
        if kind != self.primary and version:
            try:
                name = record_name(kind, meta.get("namespace", ""), meta.get("name", ""))
                connection().set(name, version, px=TTL_MS)
            except redis.RedisError as exc:  # the echo will cost a run, nothing more
                log.warning("Could not record the write of %s %s: %s", kind, meta.get("name"), exc)
        return written


def shows_own_write(kind: Kind, namespace: str, name: str, version: str) -> bool:
    """Whether a copy of an object at `version` shows the operators' last own write of it,
    so that a patch computed from it needs no precondition against others' writes since.

    Against the child's controller updating its status, a patch of a child with its
    mirror copy's version as precondition met a 409 (on the rig, 7 and 10 size changes of
    200 in the patch benchmark), then read the child and patched again: two requests. What
    the precondition is for is a copy older than the previous run's own patch: from it a
    run would find its own change undone and make it (and report it) again. A copy at
    least as new as the recorded write is not that. No record (none in TTL_MS, or Redis
    restarted and lost it), Redis unreachable, or versions that are not integers: not
    known, so the precondition stays. A watcher lagging past TTL_MS, or one behind a Redis
    restart, can still hold a copy without the last own write; a child nobody has written
    for a minute meets no 409 anyway."""
    try:
        recorded = connection().get(record_name(kind, namespace, name))
    except redis.RedisError:
        return False
    if recorded is None:
        return False
    own = version_number(recorded.decode() if isinstance(recorded, bytes) else recorded)
    mine = version_number(version)
    return mine is not None and own is not None and mine >= own


def echoes_of(changes: Sequence[Change]) -> list[bool]:
    """For each change the watcher mirrored, whether it is exactly a run's own write: one
    Redis round trip for the lot."""
    if not changes:
        return []
    names, versions = [], []
    for change in changes:
        meta = change.body.get("metadata") or {}
        names.append(record_name(change.kind, meta.get("namespace", ""), meta.get("name", "")))
        versions.append(str(meta.get("resourceVersion") or ""))
    try:
        recorded = connection().mget(names)
    except redis.RedisError as exc:  # each echo costs a run then, as before; the batch is kept
        log.warning("Could not look up the runs' own writes: %s", exc)
        return [False] * len(names)
    return [
        bool(version) and seen == version.encode()
        for version, seen in zip(versions, recorded, strict=True)
    ]
