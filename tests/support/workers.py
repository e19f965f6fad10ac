"""Per-worker names for a suite run in parallel (pytest-xdist: `make test` runs `-n`).

Each xdist worker is its own process with its own session fixtures: its own kubesim,
redis-server, PostgreSQL and test database, on ports the OS hands out (free_port), under
its own tmp_path_factory directory. What two workers could still share is named here.

    per_worker("opsboard-test")   # "opsboard-test-gw1" in a worker, "opsboard-test-main" alone
"""

from __future__ import annotations

import os


def worker_id() -> str:
    """xdist's name of this worker ("gw0", "gw1", ...), or "main" when not run in parallel."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def per_worker(name: str) -> str:
    """`name`, made unique to this worker: for files, databases, leases shared otherwise."""
    return f"{name}-{worker_id()}"
