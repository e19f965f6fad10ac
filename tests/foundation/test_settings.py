"""Bad configuration stops start-up with one clear line naming the variable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPSBOARD_", "DATABASE_"))}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, "OPSBOARD_STATE_DIR": env.pop("state_dir"), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"OPSBOARD_DEBUG": "maybe"}, "OPSBOARD_DEBUG"),
        ({"OPSBOARD_SECRET_KEY_FILE": "/nonexistent/secret"}, "OPSBOARD_SECRET_KEY_FILE"),
        ({"DATABASE_URL": "postgres//no-scheme"}, "DATABASE_URL"),
        ({"DATABASE_URL": "nosuchdb://host/name"}, "DATABASE_URL"),
        ({"REDIS_URL": "localhost:6379"}, "REDIS_URL"),
        ({"OPSBOARD_TASK_TIME_LIMIT": "ten"}, "OPSBOARD_TASK_TIME_LIMIT"),
        (
            {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "DATABASE_URL": "sqlite:////tmp/x.db"},
            "OPSBOARD_SECRET_KEY",
        ),
        ({"KUBERNETES_SERVICE_HOST": "10.96.0.1", "OPSBOARD_SECRET_KEY": "k" * 60}, "DATABASE_URL"),
        ({"DATABASE_URL": "postgres://u:p@127.0.0.1:1/opsboard"}, "OPSBOARD_SECRET_KEY"),
    ],
)
def test_bad_configuration_stops_with_one_line_naming_the_variable(
    tmp_path: Path, env: dict[str, str], variable: str
) -> None:
    result = manage("check", state_dir=str(tmp_path), **env)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert variable in lines[0]
    assert "Traceback" not in result.stderr


def test_secret_key_comes_from_a_file(tmp_path: Path) -> None:
    secret = tmp_path / "key"
    secret.write_text("k" * 60 + "\n")
    result = manage(
        "shell", "-c", "from django.conf import settings; print(settings.SECRET_KEY)",
        state_dir=str(tmp_path), OPSBOARD_SECRET_KEY_FILE=str(secret),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "k" * 60


def test_production_settings_pass_the_deploy_checks(tmp_path: Path) -> None:
    result = manage(
        "check", "--deploy", "--fail-level", "WARNING",
        state_dir=str(tmp_path),
        OPSBOARD_DEBUG="false",
        OPSBOARD_HTTPS="true",
        OPSBOARD_SECRET_KEY="x7!Qm2#vR9$wL4^pZ8&nK3*tB6(yH1)cJ5@fD0%gS2+eA7-uW9=oI4~",
        OPSBOARD_ALLOWED_HOSTS="opsboard.example.com",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"OPSBOARD_OIDC_ISSUER": "https://sso.example.com"}, "OPSBOARD_OIDC_CLIENT_ID"),
        ({"OPSBOARD_LOCAL_LOGIN": "false"}, "OPSBOARD_OIDC_ISSUER"),
        ({"OPSBOARD_OIDC_GROUP_ROLES": "ops=root"}, "OPSBOARD_OIDC_GROUP_ROLES"),
        ({"OPSBOARD_LOGIN_FAILURE_LIMIT": "0"}, "OPSBOARD_LOGIN_FAILURE_LIMIT"),
    ],
)
def test_bad_access_configuration_stops_naming_the_variable(
    tmp_path: Path, env: dict[str, str], variable: str
) -> None:
    result = manage("check", state_dir=str(tmp_path), **env)
    assert result.returncode != 0
    assert variable in result.stderr.strip().splitlines()[-1]


def test_sso_client_secrets_can_come_from_files(tmp_path: Path) -> None:
    (tmp_path / "id").write_text("opsboard\n")
    (tmp_path / "secret").write_text("s3cret\n")
    result = manage(
        "shell", "-c",
        "from django.conf import settings as s; "
        "print(s.OIDC_RP_CLIENT_ID, s.OIDC_RP_CLIENT_SECRET, s.AUTHENTICATION_BACKENDS[-1])",
        state_dir=str(tmp_path), OPSBOARD_OIDC_ISSUER="https://sso.example.com",
        OPSBOARD_OIDC_CLIENT_ID_FILE=str(tmp_path / "id"),
        OPSBOARD_OIDC_CLIENT_SECRET_FILE=str(tmp_path / "secret"),
    )  # fmt: skip
    last = result.stdout.strip().splitlines()[-1]
    assert last.split() == ["opsboard", "s3cret", "opsboard.accounts.oidc.SsoBackend"]


@pytest.mark.parametrize(
    ("query", "bound"), [("", "True"), ("?server_side_binding=false", "False")]
)
def test_postgresql_binds_parameters_on_the_server_unless_the_url_says_not(
    tmp_path: Path, query: str, bound: str
) -> None:
    result = manage(
        "shell", "-c",
        "from django.conf import settings as s; "
        "print(s.DATABASES['default']['OPTIONS'].get('server_side_binding'))",
        state_dir=str(tmp_path), DATABASE_URL=f"postgres://u:p@127.0.0.1:1/opsboard{query}",
        OPSBOARD_SECRET_KEY="k" * 60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == bound
