"""The reconcile log writer: one row per run, no-op runs folded, retention bounded."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import F, Field
from django.utils import timezone

from controllers.base import Key
from opsboard.db_retry import retrying
from opsboard.engine.models import ReconcileRun
from opsboard.engine.outcome import Outcome
from opsboard.engine.signals import reconcile_run_recorded


@dataclass(frozen=True)
class RunRecord:
    key: Key
    uid: str
    generation: int | None
    trigger: str
    trigger_detail: str
    worker: str
    started_at: datetime
    finished_at: datetime
    outcome: Outcome
    requeue_after: float | None
    error: str
    actions: list[str]
    # The timeline: the triggers merged into this run ({"trigger", "detail", "at"}), how
    # many more were not kept, its wait in the queue, and its backoff step.
    triggers: list[dict[str, Any]] = field(default_factory=list)
    triggers_dropped: int = 0
    queue_wait_ms: float | None = None
    backoff_step: int = 0

    @property
    def next_due_at(self) -> datetime | None:
        """When this key runs again by itself (requeue-after or the retry's backoff)."""
        if self.requeue_after is None:
            return None
        return self.finished_at + timedelta(seconds=self.requeue_after)

    @property
    def changed_nothing(self) -> bool:
        return not self.actions and not self.error


def reconcile_run_record(*, run: RunRecord) -> ReconcileRun:
    """Stores a run; a run that changed nothing is folded into a last run that did the same.
    Either way, `reconcile_run_recorded` is sent (the audit links patches to their run).

    Only the worker holding the key's lock writes its runs, so the reads need no
    transaction, and each write is one statement: SQLite's write lock is held briefly.
    """
    duration_ms = (run.finished_at - run.started_at).total_seconds() * 1000
    # A run someone asked for ("Reconcile now") keeps its own row, so they can see it.
    if run.changed_nothing and run.trigger != ReconcileRun.Trigger.MANUAL:
        last = _last_run(run.key)
        if (
            last is not None
            and not last.actions
            and not last.error
            and last.outcome == run.outcome
            and last.generation == run.generation
            and last.uid == run.uid
            and last.trigger != ReconcileRun.Trigger.MANUAL
        ):
            folded_id = last.id
            retrying(
                lambda: ReconcileRun.objects.filter(id=folded_id).update(
                    folded_count=F("folded_count") + 1,
                    last_folded_at=run.started_at,
                    duration_ms=duration_ms,
                ),
                what="folding a run",
            )
            reconcile_run_recorded.send(ReconcileRun, run=last, started_at=run.started_at)
            return last
    row, old = retrying(lambda: _create(run, duration_ms), what="recording a run")
    if old is None:
        old = _beyond_keep(run.key)
    if old:  # in id order, as pruning deletes, so that the two never deadlock each other
        retrying(
            lambda: ReconcileRun.objects.filter(id__in=sorted(old)).delete(),
            what="trimming a key's runs",
        )
    reconcile_run_recorded.send(ReconcileRun, run=row, started_at=run.started_at)
    return row


def _last_run(key: Key) -> ReconcileRun | None:
    """The key's newest run, asked before every run that changed nothing is stored: in
    plain SQL on the same index, for the reason `_beyond_keep` gives."""
    runs = ReconcileRun.objects.raw(
        f"SELECT * FROM {ReconcileRun._meta.db_table}"
        " WHERE controller = %s AND namespace = %s AND name = %s"
        " ORDER BY started_at DESC LIMIT 1",
        [key.controller, key.namespace, key.name],
    )
    return next(iter(runs), None)


def _beyond_keep(key: Key) -> list[int]:
    """The ids of the key's runs older than the newest OPSBOARD_RUNLOG_KEEP_PER_KEY. Asked
    after every stored run, so in plain SQL on the (controller, namespace, name, -started_at)
    index: the ORM spent longer building the query than the database answering it."""
    with connection.cursor() as cursor:
        cursor.execute(
            _BEYOND_KEEP,
            [key.controller, key.namespace, key.name, settings.OPSBOARD_RUNLOG_KEEP_PER_KEY],
        )
        return [id_ for (id_,) in cursor.fetchall()]


# The ids of a key's runs past the newest OFFSET: `_beyond_keep`, and the second half of
# `_insert_and_beyond_keep`.
_BEYOND_KEEP = (
    f"SELECT id FROM {ReconcileRun._meta.db_table}"
    " WHERE controller = %s AND namespace = %s AND name = %s"
    " ORDER BY started_at DESC LIMIT 1000 OFFSET %s"
)


def _create(run: RunRecord, duration_ms: float) -> tuple[ReconcileRun, list[int] | None]:
    """One INSERT, prepared as the ORM prepares it (each field's pre_save and database
    value), without Model.save's machinery around it: that was half of recording a run.

    On PostgreSQL the same statement also answers `_beyond_keep` (the rows it sees are
    those before the insert, so one fewer is kept of them): a round trip less per run.
    Elsewhere the second list is None: ask `_beyond_keep`."""
    row = ReconcileRun(
        controller=run.key.controller,
        namespace=run.key.namespace,
        name=run.key.name,
        uid=run.uid,
        generation=run.generation,
        trigger=run.trigger,
        trigger_detail=run.trigger_detail[:200],
        worker=run.worker[:200],
        started_at=run.started_at,
        finished_at=run.finished_at,
        duration_ms=duration_ms,
        outcome=run.outcome,
        requeue_after=run.requeue_after,
        error=run.error,
        actions=run.actions,
        triggers=run.triggers,
        triggers_dropped=run.triggers_dropped,
        queue_wait_ms=run.queue_wait_ms,
        backoff_step=run.backoff_step,
        next_due_at=run.next_due_at,
    )
    fields, sql = _insert()
    # The connection itself, not django.db.connection: that proxy looks the connection up
    # in a thread-local on every attribute, and each field's prep reads it (127 → 61 µs).
    conn = connections[DEFAULT_DB_ALIAS]
    values = [f.get_db_prep_save(f.pre_save(row, True), conn) for f in fields]
    old: list[int] | None = None
    with conn.cursor() as cursor:
        if conn.vendor == "postgresql":
            key, keep = run.key, settings.OPSBOARD_RUNLOG_KEEP_PER_KEY
            older: list[str | int] = [key.controller, key.namespace, key.name, keep - 1]
            cursor.execute(_insert_and_beyond_keep(), [*values, *older])
            row.id, old = cursor.fetchone()
        else:
            cursor.execute(sql, values)
            row.id = cursor.fetchone()[0]
    row._state.adding, row._state.db = False, conn.alias
    return row, old


@cache
def _insert_and_beyond_keep() -> str:
    return f"WITH new AS ({_insert()[1]}) SELECT (SELECT id FROM new), ARRAY({_BEYOND_KEEP})"


@cache
def _insert() -> tuple[list[Field[Any, Any]], str]:
    """The fields a run's INSERT writes, and its SQL: worked out once per process."""
    fields = [f for f in ReconcileRun._meta.concrete_fields if not f.primary_key]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    return fields, (
        f"INSERT INTO {quote(ReconcileRun._meta.db_table)} ({columns})"
        f" VALUES ({', '.join(['%s'] * len(fields))}) RETURNING {quote('id')}"
    )


def reconcile_runs_prune(*, now: datetime | None = None) -> int:
    """Deletes runs older than OPSBOARD_RUNLOG_KEEP_DAYS; returns how many."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.OPSBOARD_RUNLOG_KEEP_DAYS)
    deleted, _ = retrying(
        lambda: ReconcileRun.objects.filter(started_at__lt=cutoff).delete(),
        what="pruning the reconcile log",
    )
    return deleted
