"""Fixtures shared by the whole suite live in tests/fixtures/, one module per server."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

pytest_plugins = [
    "tests.fixtures.redis",
    "tests.fixtures.kubesim",
    "tests.fixtures.celery",
    "tests.fixtures.oidc",
    "tests.fixtures.postgres",
    "tests.accounts.users",
]

_TMPDIR = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """Every process the suite starts writes its temporary files (the API client's copy of
    the cluster's CA, a pool's shared memory) under one directory, removed at the run's end:
    a worker killed at a test's end never removes its own, and a run left thousands in /tmp.
    xdist's workers inherit the controller's directory. Others may pass through it (not
    list or write it): the embedded PostgreSQL's server runs as an unprivileged user."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    config.stash[_TMPDIR] = os.environ["TMPDIR"] = tempfile.mkdtemp(prefix="opsboard-tests-")
    os.chmod(os.environ["TMPDIR"], 0o711)


def pytest_unconfigure(config: pytest.Config) -> None:
    if directory := config.stash.get(_TMPDIR, ""):
        shutil.rmtree(directory, ignore_errors=True)
