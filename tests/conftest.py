"""Fixtures shared by the whole suite live in tests/fixtures/, one module per server."""

pytest_plugins = [
    "tests.fixtures.redis",
    "tests.fixtures.kubesim",
    "tests.fixtures.celery",
    "tests.fixtures.oidc",
    "tests.fixtures.postgres",
    "tests.accounts.users",
]
