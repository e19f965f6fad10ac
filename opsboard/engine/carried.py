"""A CR's edit carried with its key, so that its run need not wait for the mirror.

The watcher mirrored a batch, then queued its keys: a user's edit of a CR waited for its
mirror write (0.4 ms of a size patch's 4 to 5 on kubesim, by `bench patch --trace`)
before a pool process could pop its key. Now a modification of a CR the mirror knows is
queued first, with the body the watch brought beside its key in Redis (the queue's
`carried:<key>`), and mirrored after. The run that takes the key takes the body too, and
reads the newer of it and the mirror's copy: the mirror may have caught up meanwhile, or
hold a newer change still (the run's own status write, say).

Only a modification of an object the mirror has is carried. A new object, or a deleted
one, is queued after its mirror write as before, so a run never reconciles an object the
mirror does not have from a body alone: a deleted CR's late carried body is never read.
A body not taken within the queue's CARRIED_TTL_MS expires: its run reads the mirror.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import orjson

from controllers.base import Body, Key
from opsboard.mirror.writer import MODIFIED, Change, version_number


def _version(body: Body) -> int | None:
    return version_number(body["metadata"].get("resourceVersion"))


def early(changes: Sequence[Change]) -> list[Change]:
    """The changes to queue before their mirror write: every change of an object whose
    last one in the batch modifies what the mirror has, at a version that can be
    compared (the run picks the newer copy by it)."""
    last: dict[str, Change] = {}
    for change in changes:
        last[change.body["metadata"]["uid"]] = change
    carried = {
        uid
        for uid, change in last.items()
        if change.type == MODIFIED and change.previous is not None and _version(change.body)
    }
    return [change for change in changes if change.body["metadata"]["uid"] in carried]


def bodies(keys: Iterable[Key], changes: Sequence[Change]) -> dict[Key, bytes]:
    """Each primary key's body to carry: its object's last change (the batch is of one
    primary kind, so a key is found by its namespace and name)."""
    by_name = {
        (change.body["metadata"].get("namespace", ""), change.body["metadata"]["name"]): change
        for change in changes
    }
    return {
        key: orjson.dumps(change.body)
        for key in keys
        if (change := by_name.get((key.namespace, key.name))) is not None
    }


def newer(mirrored: Body | None, carried: bytes) -> Body | None:
    """The run's copy of its CR: the carried body when it is newer than the mirror's. An
    object the mirror does not have is not read from a carried body (see the module)."""
    if not carried or mirrored is None:
        return mirrored
    body: Body = orjson.loads(carried)
    mine, theirs = _version(body), _version(mirrored)
    if mine is None or theirs is None or mine <= theirs:
        return mirrored
    return body
