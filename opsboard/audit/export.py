"""CSV export of audit entries, streamed so a large export does not sit in memory.

Some of what the audit holds comes from outside (a username posted to the login page, a
message from the API server): a cell a spreadsheet would run as a formula is neutralised
with a leading quote, as OWASP advises for CSV injection."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator

from django.db.models import QuerySet

from opsboard.audit.models import AuditEntry

COLUMNS = [
    "entry", "at", "username", "action", "controller", "kind", "namespace", "name", "before",
    "after", "result", "message", "generation", "observed_by_run", "observed_at",
    "kube_user", "kube_groups",
]  # fmt: skip


# What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> str:
    """The value as a cell no spreadsheet runs: text that would start a formula gets "'"."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


class _Echo:
    def write(self, value: str) -> str:
        return value


def audit_csv_rows(entries: QuerySet[AuditEntry]) -> Iterable[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(COLUMNS)
    for e in _iterate(entries):
        run = e.observed_by
        row = [
            e.pk, e.at.isoformat(), e.username, e.action, e.controller, e.kind, e.namespace,
            e.name, json.dumps(e.before, sort_keys=True), json.dumps(e.after, sort_keys=True),
            e.result, e.message, e.generation if e.generation is not None else "",
            run.pk if run else "", run.started_at.isoformat() if run else "",
            e.kube_user, json.dumps(e.kube_groups) if e.kube_user else "",
        ]  # fmt: skip
        yield writer.writerow([csv_cell(value) for value in row])


def _iterate(entries: QuerySet[AuditEntry]) -> Iterator[AuditEntry]:
    return entries.select_related("observed_by").iterator(chunk_size=500)
