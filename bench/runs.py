"""Read the engine's reconcile log (ReconcileRun) straight from a stack's SQLite file.

The bench process is not a Django process of the stack it measures (each stack has
its own database), so it reads the table with sqlite3, read-only.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

TABLE = "engine_reconcilerun"


def _connect(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=20)


def reconciles_total(db: Path) -> int:
    """Every run so far, folded no-op runs included (each folds a counter into a row)."""
    with _connect(db) as conn:
        count, folded = conn.execute(
            f"SELECT COUNT(*), COALESCE(SUM(folded_count), 0) FROM {TABLE}"
        ).fetchone()
    return int(count) + int(folded)


def first_run_started(db: Path, *, name: str, generation: int) -> datetime | None:
    """When the first reconcile that observed `generation` of CR `name` started."""
    with _connect(db) as conn:
        row = conn.execute(
            f"SELECT MIN(started_at) FROM {TABLE} WHERE name = ? AND generation >= ?",
            (name, generation),
        ).fetchone()
    if not row or row[0] is None:
        return None
    started = datetime.fromisoformat(str(row[0]))
    return started if started.tzinfo else started.replace(tzinfo=UTC)


def runs_by_cause(db: Path, *, since: datetime) -> dict[str, int]:
    """Rows of runs started since `since`, by what caused them ("event ADDED Deployment",
    "requeue after", ...): what a converged fleet keeps reconciling for."""
    with _connect(db) as conn:
        rows = conn.execute(
            f"SELECT trigger, trigger_detail FROM {TABLE} WHERE started_at >= ?",
            (since.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" "),),
        ).fetchall()
    causes: Counter[str] = Counter(
        " ".join([str(trigger), *str(detail).split()[:2]]) for trigger, detail in rows
    )
    return dict(causes.most_common())
