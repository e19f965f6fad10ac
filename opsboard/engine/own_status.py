"""A run's own status writes, kept in its process until the mirror has them.

The watcher holds a primary's change that leaves its generation observed (most often the
operator's own status write, which wakes nobody) for company, like an owned object's
change: one mirror write for many instead of one each. A key that changed while it ran
runs again at once in the same process (runner.AGAIN_IN_PLACE), and from the mirror alone
it would read its CR without the status it had just written: it would write it again, or
with a precondition meet a 409. So the server's reply to each status write is kept here,
and a read of that object from the mirror takes the reply while the mirror is older. A run
in another process learns that version with its key's lock (the queue's `status-written`)
and reads its CR from the server when the mirror is older still (runner._older_than).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from controllers.base import Body, Kind
from opsboard.mirror.writer import version_number

# The in-place reruns come at once, and past these the queue's record still holds (a
# read from the server then): a few hundred bodies per process, not a fleet's.
KEEP_SECONDS = 10.0  # far longer than the watcher holds a change (a quarter second)
KEEP_MAX = 256  # objects; the oldest go first

_Name = tuple[str, str, str, str]  # api_version, kind, namespace, name
_lock = threading.Lock()
_written: OrderedDict[_Name, tuple[float, int, Body]] = OrderedDict()  # → (when, rv, body)


def _version(body: Body | None) -> int | None:
    return version_number(((body or {}).get("metadata") or {}).get("resourceVersion"))


def remember(kind: Kind, written: Body) -> None:
    """Keeps the object a status write returned (the server's copy at its new version)."""
    meta = written.get("metadata") or {}
    version = _version(written)
    if version is None:
        return
    name = (kind.api_version, kind.kind, meta.get("namespace", ""), meta.get("name", ""))
    now = time.monotonic()
    with _lock:
        _written.pop(name, None)
        _written[name] = (now, version, written)
        while _written and (
            len(_written) > KEEP_MAX or next(iter(_written.values()))[0] < now - KEEP_SECONDS
        ):
            _written.popitem(last=False)


def newest(kind: Kind, namespace: str, name: str, mirrored: Body | None) -> Body | None:
    """The mirror's copy of an object, or this process's own status write of it when the
    mirror has not caught up with that yet. An object gone from the mirror stays gone."""
    key = (kind.api_version, kind.kind, namespace, name)
    with _lock:
        kept, mine = _written.get(key), _version(mirrored)
        if kept is None or mirrored is None or mine is None:
            return mirrored
        if mine >= kept[1]:
            del _written[key]  # the mirror has it now
            return mirrored
        return kept[2]
