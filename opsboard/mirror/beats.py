"""A Node's "still here" told from its news.

A kubelet posts its Node's status every few minutes when nothing changed (the rig's fake
kubelet every 30 s), each condition's lastHeartbeatTime its only change. Mirrored, each
would be a write, and would move the pages' "last change" (their polls then re-render the
overview and every banner). Nothing reads a heartbeat while the node is Ready; the write
that turns Ready Unknown is news, and carries the kubelet's last heartbeat (the node
controller keeps it), which is what the Diagnosis says as "last heard from".
"""

from __future__ import annotations

import hashlib

import orjson

from controllers.base import Body
from opsboard.mirror.writer import trimmed


def _told(body: Body) -> bytes:
    """What a Node says apart from its heartbeat: a digest of it as the mirror keeps it
    (writer.trimmed), without its resourceVersion and its conditions' heartbeat times."""
    kept = trimmed(body)
    meta = {k: v for k, v in (kept.get("metadata") or {}).items() if k != "resourceVersion"}
    status = dict(kept.get("status") or {})
    status["conditions"] = [
        {k: v for k, v in c.items() if k != "lastHeartbeatTime"}
        for c in status.get("conditions") or []
    ]
    told = {**kept, "metadata": meta, "status": status}
    return hashlib.blake2b(orjson.dumps(told, option=orjson.OPT_SORT_KEYS), digest_size=16).digest()


class Heartbeats:
    """The last news of each Node this watcher mirrored, by uid: a few bytes a node."""

    def __init__(self) -> None:
        self._told: dict[str, bytes] = {}

    def news(self, type_: str, body: Body) -> bool:
        """Whether a Node's watch event is worth mirroring: all but a MODIFIED that says
        what the last one mirrored said, heartbeat aside."""
        uid = str((body.get("metadata") or {}).get("uid", ""))
        if type_ == "DELETED":
            self._told.pop(uid, None)
            return True
        told = _told(body)
        if type_ == "MODIFIED" and self._told.get(uid) == told:
            return False
        self._told[uid] = told
        return True
