"""CSV export of audit entries, streamed so a large export does not sit in memory."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator

from django.db.models import QuerySet

from opsboard.audit.models import AuditEntry

COLUMNS = [
    "at", "username", "action", "controller", "kind", "namespace", "name", "before",
    "after", "result", "message", "generation", "observed_by_run", "observed_at",
]  # fmt: skip


class _Echo:
    def write(self, value: str) -> str:
        return value


def audit_csv_rows(entries: QuerySet[AuditEntry]) -> Iterable[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(COLUMNS)
    for e in _iterate(entries):
        run = e.observed_by
        yield writer.writerow(
            [
                e.at.isoformat(), e.username, e.action, e.controller, e.kind, e.namespace,
                e.name, json.dumps(e.before, sort_keys=True), json.dumps(e.after, sort_keys=True),
                e.result, e.message, e.generation if e.generation is not None else "",
                run.pk if run else "", run.started_at.isoformat() if run else "",
            ]
        )  # fmt: skip


def _iterate(entries: QuerySet[AuditEntry]) -> Iterator[AuditEntry]:
    return entries.select_related("observed_by").iterator(chunk_size=500)
