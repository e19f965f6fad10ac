"""Every environment variable the code reads is documented, and no example sets a stale one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.deploy.kustomize import DEPLOY, ROOT, env_file_names

SOURCES = ["opsboard", "controllers", "kubesim"]
DOCS = ROOT / "docs" / "deployment.md"
ENV_EXAMPLE = ROOT / ".env.example"
README = ROOT / "README.md"
# env_str("X"), env_secret("X"), os.environ.get("X"), os.environ["X"], os.getenv("X"),
# self.env.get("X"): the ways our code reads its environment.
READ = re.compile(
    r"""(?:\benv_(?:str|bool|int|float|list|secret)\(|\benv(?:iron)?(?:\.get\(|\[)|getenv\()"""
    r"""\s*["']([A-Z][A-Z0-9_]*)["']"""
)
SECRET_FILE = re.compile(r"""\benv_secret\(\s*["']([A-Z][A-Z0-9_]*)["']""")


def variables_read_by_the_code() -> set[str]:
    names: set[str] = set()
    for package in SOURCES:
        for path in (ROOT / package).rglob("*.py"):
            text = path.read_text()
            names |= set(READ.findall(text))
            names |= {f"{name}_FILE" for name in SECRET_FILE.findall(text)}
    return {name for name in names if not name.startswith("OPSBOARD_TEST_")}


def compose_variables() -> set[str]:
    text = "".join(p.read_text() for p in ROOT.glob("docker-compose*.yml"))
    return set(re.findall(r"\$\{([A-Z][A-Z0-9_]*)", text)) | set(
        re.findall(r"environment: ([A-Z][A-Z0-9_]*)$", text, flags=re.M)
    )


def test_the_scan_finds_the_settings_we_know_of() -> None:
    found = variables_read_by_the_code()
    assert {"OPSBOARD_SECRET_KEY", "OPSBOARD_SECRET_KEY_FILE", "DATABASE_URL", "REDIS_URL",
            "KUBECONFIG", "OPSBOARD_LOG_LEVEL", "OPSBOARD_PORT"} <= found  # fmt: skip


@pytest.mark.parametrize("document", [DOCS, ENV_EXAMPLE, README], ids=lambda p: p.name)
def test_every_variable_the_code_reads_is_named(document: Path) -> None:
    text = document.read_text()
    missing = {name for name in variables_read_by_the_code() if not re.search(rf"\b{name}\b", text)}
    assert not missing


def test_the_deployment_doc_names_every_compose_and_kubernetes_variable() -> None:
    text = DOCS.read_text()
    names = compose_variables() | set(env_file_names(DEPLOY / "secrets.env.example"))
    names |= set(env_file_names(DEPLOY / "settings.env"))
    assert not {name for name in names if f"`{name}`" not in text}


@pytest.mark.parametrize(
    ("example", "also_known"),
    [
        (ENV_EXAMPLE, "compose"),
        (DEPLOY / "settings.env", ""),
        (DEPLOY / "secrets.env.example", "REDIS_PASSWORD"),  # the manifests build REDIS_URL
    ],
    ids=lambda v: getattr(v, "name", v),
)
def test_no_example_sets_a_variable_nothing_reads(example: Path, also_known: str) -> None:
    known = variables_read_by_the_code()
    known |= compose_variables() if also_known == "compose" else {also_known}
    assert set(env_file_names(example)) - known == set()
