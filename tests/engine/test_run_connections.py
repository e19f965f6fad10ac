"""A worker's database connection between runs: kept, and health-checked (Django's
`SELECT 1`) only when it has not just worked (opsboard.engine.database)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from django.db import connection

from opsboard.engine import database

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """The connection kept across runs, health checks on, and each check recorded."""
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", None)
    monkeypatch.setitem(connection.settings_dict, "CONN_HEALTH_CHECKS", True)
    seen: list[bool] = []
    usable = connection.is_usable

    def recorded() -> bool:
        seen.append(usable())
        return seen[-1]

    monkeypatch.setattr(connection, "is_usable", recorded)
    monkeypatch.setattr(database._worked_at, "by_alias", {})
    connection.close()
    connection.ensure_connection()  # with the settings above
    yield seen


def a_run() -> None:
    database.run_starts()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 2")
    database.run_ends()


def test_a_connection_that_just_worked_is_not_checked_again(checks: list[bool]) -> None:
    a_run()
    assert checks == [True]  # the first run: nothing known of the connection yet
    a_run()
    a_run()
    assert checks == [True]


def test_a_connection_idle_for_a_while_is_checked_before_use(checks: list[bool]) -> None:
    a_run()
    database._worked_at.by_alias[connection.alias] = time.monotonic() - 2 * database.RECENTLY
    a_run()
    assert checks == [True, True]
