"""In production mode, Django's deployment checklist (`manage.py check --deploy`) is clean."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

from tests.deploy.kustomize import ROOT


def _check_deploy(tmp_path: Path, **overrides: str) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPSBOARD_", "DATABASE_URL", "REDIS_URL", "KUBECONFIG"))
    }
    env.update(
        OPSBOARD_DEBUG="false",
        OPSBOARD_HTTPS="true",
        OPSBOARD_SECRET_KEY=secrets.token_urlsafe(50),
        OPSBOARD_ALLOWED_HOSTS="opsboard.example.com",
        OPSBOARD_CSRF_TRUSTED_ORIGINS="https://opsboard.example.com",
        OPSBOARD_STATE_DIR=str(tmp_path),
        DJANGO_SETTINGS_MODULE="opsboard.settings",
    )
    env.update(overrides)
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "DEBUG"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_settings_pass_the_deployment_checklist(tmp_path: Path) -> None:
    result = _check_deploy(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_the_checklist_flags_plain_http_and_a_weak_key(tmp_path: Path) -> None:
    result = _check_deploy(tmp_path, OPSBOARD_HTTPS="false", OPSBOARD_SECRET_KEY="short")
    assert result.returncode != 0
    output = result.stderr + result.stdout
    assert "security.W008" in output  # SECURE_SSL_REDIRECT
    assert "security.W009" in output  # SECRET_KEY
