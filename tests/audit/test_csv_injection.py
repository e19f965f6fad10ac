"""The CSV export never hands a spreadsheet a formula: the audit holds text chosen by
strangers (a username posted to the login page), and OWASP's advice is a leading quote."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client

from opsboard.audit.models import AuditEntry

pytestmark = pytest.mark.django_db

FORMULA = '=HYPERLINK("http://attacker.example/","open")'


def _rows(client: Client) -> list[dict[str, str]]:
    response = client.get("/audit/export.csv")
    assert response.status_code == 200
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_every_column_that_would_start_a_formula_gets_a_leading_quote(
    admin_client_: Client, start: str
) -> None:
    text = f"{start}cmd|' /C calc'!A0"
    AuditEntry.objects.create(
        username=text, action=AuditEntry.Action.LOCKOUT, controller=text, kind=text,
        namespace=text, name=text, result=AuditEntry.Result.REJECTED, message=text,
    )  # fmt: skip
    (row,) = _rows(admin_client_)
    for column in ("username", "controller", "kind", "namespace", "name", "message"):
        assert row[column] == "'" + text, column


def test_the_lockout_username_of_the_walk_through_is_text_and_the_rest_is_unchanged(
    admin_client_: Client,
) -> None:
    AuditEntry.objects.create(
        username=FORMULA, action=AuditEntry.Action.LOCKOUT, controller="", kind="",
        namespace="", name="", result=AuditEntry.Result.REJECTED, message="Logins locked out",
    )  # fmt: skip
    AuditEntry.objects.create(
        username="otto", action=AuditEntry.Action.PATCH, controller="memcached",
        kind="Memcached", namespace="default", name="cache-a", before={"spec.size": 3},
        after={"spec.size": 5}, result=AuditEntry.Result.APPLIED, generation=2,
    )  # fmt: skip
    rows = {row["action"]: row for row in _rows(admin_client_)}
    assert rows["lockout"]["username"] == "'" + FORMULA
    patch = rows["patch"]
    assert (patch["username"], patch["name"], patch["generation"]) == ("otto", "cache-a", "2")
    assert patch["before"] == '{"spec.size": 3}'
