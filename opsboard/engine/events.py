"""Posting a run's Events after the run, on a thread of the worker process.

An Event is a courtesy (the run log is the record): a reconcile must not wait for the
API server to store them. Posting them inline took three of the five API requests of a
first reconcile, about a third of its time; here the task ends once the run is recorded
and the key released, and one thread per process posts the Events in order. They are
flushed when the process exits; if it is killed first, its unposted Events are lost,
which the run log, written before, does not depend on.
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import threading

from celery import signals

from controllers.base import Body
from opsboard.engine.kubeclient import event_recorder

log = logging.getLogger(__name__)
MAX_PENDING = 10_000  # runs whose Events wait; beyond that new ones are dropped, with a log
FLUSH_SECONDS = 10.0  # how long an exiting process waits for its Events to be posted

_lock = threading.Lock()
_poster: _Poster | None = None


class _Poster:
    def __init__(self) -> None:
        self.pid = os.getpid()
        self.inbox: queue.Queue[tuple[Body, list[tuple[str, str, str]]] | None] = queue.Queue(
            maxsize=MAX_PENDING
        )
        self.thread = threading.Thread(target=self._run, name="opsboard-events", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            item = self.inbox.get()
            try:
                if item is None:
                    return
                post_now(*item)
            finally:
                self.inbox.task_done()

    def flush(self, timeout: float) -> bool:
        """Waits until every queued Event is posted; False after `timeout` seconds."""
        done = threading.Event()

        def wait() -> None:
            self.inbox.join()
            done.set()

        threading.Thread(target=wait, daemon=True).start()
        return done.wait(timeout)


def post_now(body: Body, events: list[tuple[str, str, str]]) -> None:
    for type_, reason, message in events:
        try:
            event_recorder().post(body, type_, reason, message[:1000])
        except Exception:  # an Event is a courtesy: never fail anything over it
            log.warning("Could not post Event %s on %s", reason, body["metadata"].get("name"))


def post_later(body: Body | None, events: list[tuple[str, str, str]]) -> None:
    """Queues `events` about `body` for this process's poster thread."""
    if body is None or not events:
        return
    global _poster
    with _lock:
        # A forked pool process inherits the parent's object but not its thread.
        if _poster is None or _poster.pid != os.getpid():
            _poster = _Poster()
        poster = _poster
    try:
        poster.inbox.put_nowait((body, events))
    except queue.Full:
        log.warning(
            "%d runs' Events wait to be posted: dropping those of %s",
            MAX_PENDING,
            body["metadata"].get("name"),
        )


def flush(timeout: float = FLUSH_SECONDS) -> bool:
    """Posts what is queued (at exit, and for callers that read Events right away)."""
    with _lock:
        poster = _poster if _poster is not None and _poster.pid == os.getpid() else None
    return True if poster is None else poster.flush(timeout)


def _flush_on_exit(**_: object) -> None:
    flush()


atexit.register(flush)
# A Celery pool process ends with os._exit, which skips atexit: this signal it does send.
signals.worker_process_shutdown.connect(_flush_on_exit, weak=False, dispatch_uid="opsboard-events")
