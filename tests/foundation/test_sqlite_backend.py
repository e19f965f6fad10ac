"""opsboard.sqlite: Django's SQLite backend with each statement's placeholders converted
once. The whole suite runs on it (SQLite pass); these pin what the cache must not change."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.utils import ConnectionHandler

from opsboard import settings


@pytest.fixture
def probe(tmp_path: Path, django_db_blocker: Any) -> Iterator[BaseDatabaseWrapper]:
    """A connection of its own to a scratch file, whichever database the suite uses."""
    handler = ConnectionHandler(
        {"default": {"ENGINE": "opsboard.sqlite", "NAME": str(tmp_path / "probe.sqlite3")}}
    )
    connection = handler["default"]
    with django_db_blocker.unblock():
        yield connection
        connection.close()


def test_a_statement_run_again_takes_its_new_parameters(probe: BaseDatabaseWrapper) -> None:
    with probe.cursor() as cursor:
        for value in (1, 2, "x"):
            cursor.execute("SELECT %s, '100%%'", [value])
            assert cursor.fetchone() == (value, "100%")


def test_named_parameters_and_statements_without_any(probe: BaseDatabaseWrapper) -> None:
    with probe.cursor() as cursor:
        cursor.execute("SELECT %(a)s + %(b)s", {"a": 2, "b": 3})
        assert cursor.fetchone() == (5,)
        cursor.execute("SELECT '%s'")  # no parameters: not converted, as Django does
        assert cursor.fetchone() == ("%s",)
        cursor.execute("CREATE TABLE t (v TEXT)")
        cursor.executemany("INSERT INTO t VALUES (%s)", [["a"], ["b%"]])
        cursor.execute("SELECT v FROM t WHERE v LIKE %s ORDER BY v", ["%"])
        assert cursor.fetchall() == [("a",), ("b%",)]


def test_a_sqlite_database_url_is_served_by_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "sqlite:////tmp/opsboard-probe.sqlite3")
    assert settings._database()["ENGINE"] == "opsboard.sqlite"
    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@127.0.0.1:5432/db")
    assert settings._database()["ENGINE"] == "django.db.backends.postgresql"
