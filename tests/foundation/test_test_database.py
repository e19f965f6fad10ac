"""The suite's database: SQLite by default, PostgreSQL with OPSBOARD_TEST_DATABASE=postgres,
the same one in the test process and in the engine processes it starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from tests.fixtures.celery import EngineProcesses
from tests.fixtures.postgres import chosen_database

ROOT = Path(__file__).resolve().parents[2]
THIS = "tests/foundation/test_test_database.py"


@pytest.mark.django_db
def test_the_test_database_is_the_one_chosen() -> None:
    expected = {"sqlite": "sqlite", "postgres": "postgresql"}[chosen_database()]
    assert connection.vendor == expected
    assert str(connection.settings_dict["NAME"]).split("/")[-1].startswith(("test_", "opsboard-"))


def test_engine_processes_use_the_test_processes_database(engine: EngineProcesses) -> None:
    probe = (
        "from django.db import connection; cursor = connection.cursor(); "
        "cursor.execute('SELECT 1'); "
        "print('probe:', connection.vendor, connection.settings_dict['NAME'], cursor.fetchone()[0])"
    )
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", probe],
        cwd=ROOT,
        env=engine.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    probed = [line for line in done.stdout.splitlines() if line.startswith("probe: ")]
    vendor, name, one = probed[-1].split()[1:]
    assert (vendor, name, one) == (connection.vendor, str(connection.settings_dict["NAME"]), "1")


def _run_without_postgres(ci: str) -> subprocess.CompletedProcess[str]:
    env = {
        key: value for key, value in os.environ.items() if key not in ("CI", "PYTEST_XDIST_WORKER")
    }
    env.update(OPSBOARD_TEST_DATABASE="postgres", OPSBOARD_TEST_PG_BIN="/nonexistent/pg/bin", CI=ci)
    return subprocess.run(
        [
            sys.executable, "-m", "pytest", "-o", "addopts=", "-p", "no:cacheprovider",
            "-rs", "-q", f"{THIS}::test_the_test_database_is_the_one_chosen",
        ],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_without_postgresql_its_tests_skip_saying_how_to_install_it() -> None:
    done = _run_without_postgres(ci="")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout
    assert "apt-get install postgresql" in done.stdout


def test_without_postgresql_under_ci_its_tests_fail() -> None:
    done = _run_without_postgres(ci="true")
    assert done.returncode != 0, done.stdout + done.stderr
    assert "CI=true and PostgreSQL is missing" in done.stdout
    assert "skipped" not in done.stdout


def test_a_misspelt_test_database_stops_the_run() -> None:
    env = {**os.environ, "OPSBOARD_TEST_DATABASE": "postgresql"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-o", "addopts=", "-p", "no:cacheprovider", "-q", THIS],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 4, done.stdout + done.stderr  # pytest's usage error
    assert "OPSBOARD_TEST_DATABASE='postgresql'" in done.stdout + done.stderr
