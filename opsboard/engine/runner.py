"""Running one reconcile of one key, with controller-runtime's guarantees."""

from __future__ import annotations

import logging
import os
import random
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from django.conf import settings

from controllers import trace
from controllers.apply import now
from controllers.base import (
    Body,
    Context,
    Controller,
    Key,
    PermanentError,
    Result,
    TemporaryError,
)
from controllers.conditions import condition_of, set_condition
from controllers.fields import deep_get
from controllers.graces import UNREADY_SETTING, UNSCHEDULABLE_SETTING
from controllers.kube import Conflict, Forbidden, NamespaceTerminating
from controllers.problems import RECONCILE_FAILED
from opsboard.engine import metrics
from opsboard.engine.cache import MirrorCache
from opsboard.engine.console import reconcile_line
from opsboard.engine.echoes import OwnWrites
from opsboard.engine.enqueue import send
from opsboard.engine.events import post_later
from opsboard.engine.kubeclient import api_kube
from opsboard.engine.outcome import Outcome, RunOutcome
from opsboard.engine.queue import Claimed, Started, Why, WorkQueue, backoff, queue_for
from opsboard.engine.registered import controllers
from opsboard.engine.reporter import RunReporter
from opsboard.engine.runlog import RunRecord, reconcile_run_record
from opsboard.engine.timeline import run_start
from opsboard.mirror.selectors import objects_of
from opsboard.mirror.writer import version_number

log = logging.getLogger(__name__)
console = logging.getLogger("opsboard.reconciles")  # one line per run that did something
WORKER = f"{socket.gethostname()}:{os.getpid()}"
AGAIN_IN_PLACE = 2  # runs of a key that changed while it ran, at once (see below)


@dataclass
class _Held:
    """A lock this process holds, and when to renew it next."""

    queue: WorkQueue
    key: Key
    token: str
    ttl: float
    due: float  # time.monotonic() of the next renewal


class _Renewer:
    """One thread per process keeps alive the locks of the keys this process is
    reconciling, each every ttl/3. (A thread per run cost a thread start per reconcile,
    which waits for the new thread to be scheduled: milliseconds on a busy machine.)

    With nothing held it still looks every IDLE_LOOK seconds, so that a new lock, due a
    third of its ttl later, rarely needs to wake it: waking it on every run cost the run
    a thread switch (the GIL handed over and back) for nothing."""

    IDLE_LOOK = 1.0

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.held: dict[str, _Held] = {}  # by token
        self.changed = threading.Condition()
        self.wakes_at = 0.0  # time.monotonic() the thread looks next, at the latest
        threading.Thread(target=self._run, name="opsboard-lock-renewer", daemon=True).start()

    def add(self, queue: WorkQueue, key: Key, token: str, ttl: float) -> None:
        due = time.monotonic() + ttl / 3
        with self.changed:
            self.held[token] = _Held(queue, key, token, ttl, due)
            if due < self.wakes_at:
                self.changed.notify()

    def remove(self, token: str) -> None:
        with self.changed:
            self.held.pop(token, None)

    def _run(self) -> None:
        while True:
            with self.changed:
                now = time.monotonic()
                due = [held for held in self.held.values() if held.due <= now]
                upcoming = [held.due for held in self.held.values() if held.due > now]
                if not due:
                    self.wakes_at = min(upcoming, default=now + self.IDLE_LOOK)
                    self.changed.wait(self.wakes_at - now)
                    continue
                for held in due:
                    held.due = now + held.ttl / 3
            for held in due:
                self._renew(held)

    def _renew(self, held: _Held) -> None:
        try:
            if not held.queue.renew(held.key, held.token, held.ttl):
                with self.changed:
                    lost = self.held.pop(held.token, None) is not None  # else: the run ended
                if lost:
                    log.warning("Lost the lock of %s while reconciling it", held.key)
        except Exception:  # Redis blip: try again next period, the lock may survive it
            log.exception("Could not renew the lock of %s", held.key)


_renewer: _Renewer | None = None
_renewer_lock = threading.Lock()


@contextmanager
def _renewing(queue: WorkQueue, key: Key, token: str, ttl: float) -> Iterator[None]:
    """Keeps the key's lock alive while this process works on it."""
    global _renewer
    with _renewer_lock:
        if _renewer is None or _renewer.pid != os.getpid():  # a forked pool process
            _renewer = _Renewer()
        renewer = _renewer
    renewer.add(queue, key, token, ttl)
    try:
        yield
    finally:
        renewer.remove(token)


@dataclass(frozen=True)
class _Ending:
    """What a run leaves to the lock's release, which does it in the same round trip."""

    succeeded: bool = False
    after: tuple[float, Why] | None = None  # requeue: (delay, why)
    status_written: str = ""  # the version the run's status write made, for the next run


def reconcile_key(
    *,
    key: Key,
    trigger: str,
    detail: str = "",
    worker: str = WORKER,
    claimed: Claimed | None = None,
) -> bool:
    """Reconciles `key` unless another worker holds it; False when it was skipped.
    `claimed`: its start, taken already with its pop (the consumer's `claim`).

    A key that changed while it ran (on a real cluster, most often: its pods moved on) runs
    again at once here, up to AGAIN_IN_PLACE times, rather than back through the ready
    list, where it would wait behind every key pushed meanwhile. A failed run, or one past
    a share of the soft time limit, goes back to the queue as before.
    """
    queue = queue_for(key.controller)
    deadline = time.monotonic() + settings.CELERY_TASK_SOFT_TIME_LIMIT / 4
    for turn in range(AGAIN_IN_PLACE + 1):
        if turn == 0 and claimed is not None:
            token, ttl, started = claimed.token, claimed.ttl, claimed.started
        else:
            token, ttl = uuid.uuid4().hex, settings.OPSBOARD_LOCK_TTL
            started = queue.start(key, token, ttl, Why(trigger, detail, time.time()))
        if started is None:
            return turn > 0  # running elsewhere; that worker sends it again when it finishes
        if trace.ON:
            trace.mark("run", str(key))
        ending = _Ending()
        try:
            ending = _run(queue, key, started, token, ttl, worker, datetime.now(UTC))
        except Exception as exc:
            # The run itself failed, not its controller (the database dropped the pool
            # process's connection, say): retried with backoff, as a failure is, since
            # releasing the lock alone dropped the change that queued the key.
            ending = _Ending(after=_retry_after_crash(queue, key, exc))
            raise
        finally:
            again = queue.done(
                key,
                token,
                succeeded=ending.succeeded,
                after=ending.after,
                status_written=ending.status_written,
            )
            trigger, detail = "event", "changed while reconciling"
            if again and (
                not ending.succeeded or turn == AGAIN_IN_PLACE or time.monotonic() > deadline
            ):
                send(key)
                again = False
        if not again:
            break
    return True


def _retry_after_crash(queue: WorkQueue, key: Key, exc: Exception) -> tuple[float, Why]:
    failures = queue.failed(key)
    delay = backoff(failures)
    detail = f"attempt {failures + 1}: the run failed: {type(exc).__name__}: {exc}"[:200]
    return delay, Why("retry", detail, time.time() + delay)


def _run(
    queue: WorkQueue,
    key: Key,
    taken: Started,
    token: str,
    ttl: float,
    worker: str,
    started: datetime,
) -> _Ending:
    controller = controllers().get(key.controller)
    if controller is None:
        log.error("No controller named %r: dropping %s", key.controller, key)
        return _Ending()
    why, start = taken.why, run_start(taken)
    cache = MirrorCache()
    primary = cache.get(controller.primary, key.namespace, key.name)
    if _older_than(primary, taken.status_written):  # see own_status
        primary = cache.refresh(controller.primary, key.namespace, key.name, api_kube())
    report = RunReporter()
    kube = OwnWrites(api_kube(), controller.primary)  # its children's echoes wake nobody
    ctx = Context(key=key, cache=cache, kube=kube, report=report, settings=_controller_settings())
    clock = time.perf_counter()
    with _renewing(queue, key, token, ttl):
        outcome = _reconcile(controller, ctx)
    seconds = time.perf_counter() - clock
    finished = datetime.now(UTC)

    ending = _Ending()
    if outcome.status == Outcome.ERROR:
        failures = queue.failed(key)
        delay = outcome.requeue_after
        if delay is None:
            delay = backoff(failures, temporary=outcome.temporary, denied=outcome.denied)
        outcome = replace(outcome, requeue_after=delay)
        # Stamped with the due time, so the wait in the queue leaves out the backoff itself.
        detail = f"attempt {failures + 1}: {outcome.error[:150]}"
        queue.add_after(key, delay, Why("retry", detail, time.time() + delay))
        metrics.retried(key.controller)
        if not outcome.conflict and not outcome.told:
            report.event("Warning", "ReconcileError", outcome.error)
    elif outcome.status == Outcome.PERMANENT:
        version = (primary or {}).get("metadata", {}).get("resourceVersion", "")
        queue.mark_permanent(key, version)
        report.event("Warning", RECONCILE_FAILED, outcome.error)
    else:
        ending = _Ending(succeeded=True)
        if outcome.requeue_after:
            after = outcome.requeue_after
            requeue = Why("requeue", f"after {after:g}s", time.time() + after)
            ending = _Ending(succeeded=True, after=(after, requeue))

    meta = (primary or {}).get("metadata", {})
    reconcile_run_record(
        run=RunRecord(
            key=key,
            uid=meta.get("uid", ""),
            generation=meta.get("generation"),
            trigger=why.trigger,
            trigger_detail=why.detail,
            worker=worker,
            started_at=started,
            finished_at=finished,
            outcome=outcome.status,
            requeue_after=outcome.requeue_after,
            error=outcome.error,
            actions=report.actions,
            triggers=[
                {"trigger": t.trigger, "detail": t.detail, "at": t.at} for t in start.triggers
            ],
            triggers_dropped=start.dropped,
            queue_wait_ms=max(started.timestamp() - why.at, 0.0) * 1000 if why.at else None,
            backoff_step=start.failures,
        )
    )
    if line := reconcile_line(key, why.trigger, outcome, report.actions, seconds):
        trouble = outcome.error and not outcome.conflict  # a 409 is routine: retried
        console.log(logging.WARNING if trouble else logging.INFO, "%s", line)
    metrics.reconciled(
        key.controller,
        result=outcome.metric_result,
        seconds=seconds,
        waited=started.timestamp() - why.at,
    )
    post_later(primary, report.events)  # after the run, off its clock
    return replace(ending, status_written=kube.status_written)


def _controller_settings() -> dict[str, Any]:
    """What controllers read from a run's Context.settings."""
    return {
        UNSCHEDULABLE_SETTING: settings.OPSBOARD_UNSCHEDULABLE_GRACE_SECONDS,
        UNREADY_SETTING: settings.OPSBOARD_UNREADY_GRACE_SECONDS,
    }


def _older_than(primary: Body | None, version: int | None) -> bool:
    """Whether the mirror's copy of a run's CR predates the key's last own status write:
    that write's change may still be waiting in the watcher for company (own_status)."""
    mirrored = version_number((primary or {}).get("metadata", {}).get("resourceVersion"))
    return version is not None and mirrored is not None and mirrored < version


def _reconcile(controller: Controller, ctx: Context) -> RunOutcome:
    """Calls the controller; whatever it returns or raises becomes one RunOutcome."""
    try:
        result = controller.reconcile(ctx) or Result.done()
    except NamespaceTerminating as exc:
        # Its children go first, and their deletions wake it: nothing to retry, no Degraded.
        log.info("%s: its namespace is being deleted; nothing to do (%s)", ctx.key, exc)
        return RunOutcome(Outcome.SUCCESS)
    except Forbidden as exc:
        # Not the CR's fault, and no change of it is needed: someone grants the verb (or
        # raises the quota), which nothing announces. Said as for a permanent error, and
        # tried again, slowly, as controller-runtime would.
        if not exc.told:
            degrade(controller, ctx, str(exc))
        return RunOutcome(Outcome.ERROR, error=str(exc), denied=True, told=exc.told)
    except PermanentError as exc:
        degrade(controller, ctx, str(exc))
        return RunOutcome(Outcome.PERMANENT, error=str(exc))
    except TemporaryError as exc:
        if exc.needs_someone:  # retried, and said on the CR too
            degrade(controller, ctx, str(exc))
        return RunOutcome(
            Outcome.ERROR,
            error=str(exc),
            requeue_after=exc.delay,
            conflict=isinstance(exc, Conflict),
            temporary=True,
        )
    except Exception as exc:  # a bug in a controller: back off, as for any error
        log.exception("Reconcile of %s failed", ctx.key)
        return RunOutcome(Outcome.ERROR, error=f"{type(exc).__name__}: {exc}")
    if result.requeue_after:
        return RunOutcome(Outcome.REQUEUE, requeue_after=result.requeue_after)
    return RunOutcome(Outcome.SUCCESS)


def degrade(controller: Controller, ctx: Context, error: str) -> None:
    """A reconcile that cannot succeed until someone changes something (a 403 naming the
    missing grant, a 422, a NodePort another Service holds, a webhook that does not
    answer) says so on the CR too:
    Degraded=True, the error as its message."""
    try:
        cr = ctx.kube.get(controller.primary, ctx.key.namespace, ctx.key.name)
        if cr is None:
            return
        generation = int(cr["metadata"].get("generation") or 0)
        said = condition_of(cr, "Degraded")
        if said.get("status") == "True" and said.get("observedGeneration") == generation:
            return  # the controller already said why, in its own words (InvalidSpec, ...)
        conditions = set_condition(
            deep_get(cr, "status.conditions"),
            type_="Degraded",
            status=True,
            reason=RECONCILE_FAILED,
            message=error,
            observed_generation=generation,
            now=now(),
        )
        if conditions != deep_get(cr, "status.conditions"):
            ctx.kube.patch_status(
                controller.primary, ctx.key.namespace, ctx.key.name, {"conditions": conditions}
            )
    except (PermanentError, TemporaryError) as exc:  # e.g. no grant on the status either
        log.warning("Could not set Degraded on %s: %s", ctx.key, exc)


def resync_all(*, jitter: float | None = None) -> int:
    """Queues every primary object of every controller, spread over `jitter` seconds."""
    spread = settings.OPSBOARD_RESYNC_SECONDS * 0.1 if jitter is None else jitter
    queued = 0
    for name, controller in controllers().items():
        queue = queue_for(name)
        permanent = queue.permanent_versions()
        rows = objects_of(controller.primary).values_list("namespace", "name", "resource_version")
        # A user-fixable error on this very version waits for a change, not for the resync.
        keys = [
            Key(name, namespace, obj_name)
            for namespace, obj_name, version in rows
            if permanent.get(str(Key(name, namespace, obj_name))) != version
        ]
        for start in range(0, len(keys), 1000):
            chunk = keys[start : start + 1000]
            queue.add_many_after([(k, random.uniform(0, spread)) for k in chunk], Why("resync"))
        queued += len(keys)
    return queued
