"""The web pod's environment, as the kubelet assembles it: probes and Prometheus reach the pod
by its IP and get answers; pages answer the public names only."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.deploy.kustomize import ROOT, Manifest

POD_IP = "10.244.1.17"
# Asks the web app for a path with each given Host header, through Django's test client, as
# the TLS-terminating ingress forwards it.
REQUEST = """
import django, json, sys
django.setup()
from django.test import Client
path, hosts = sys.argv[1], sys.argv[2:]
get = lambda host: Client().get(path, HTTP_HOST=host, HTTP_X_FORWARDED_PROTO="https")
print(json.dumps({host: get(host).status_code for host in hosts}))
"""


def _kubelet_env(built: list[Manifest], container: dict) -> dict[str, str]:
    """envFrom first, then env in order, expanding $(NAME) as the kubelet does."""
    config = {d["metadata"]["name"]: d for d in built if d["kind"] in {"ConfigMap", "Secret"}}
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        env.update(config[source["configMapRef"]["name"]]["data"])
    for var in container.get("env", []):
        if "value" in var:
            value = re.sub(r"\$\((\w+)\)", lambda m: env.get(m[1], m[0]), var["value"])
        elif var["valueFrom"].get("fieldRef", {}).get("fieldPath") == "status.podIP":
            value = POD_IP
        else:
            value = f"secret-{var['name'].lower()}"
        env[var["name"]] = value
    return env


def test_probes_answer_the_pod_ip_and_pages_only_the_public_names(
    built: list[Manifest], tmp_path: Path
) -> None:
    [web] = [
        d for d in built if d["kind"] == "Deployment" and d["metadata"]["name"] == "opsboard-web"
    ]
    [container] = web["spec"]["template"]["spec"]["containers"]
    env = _kubelet_env(built, container)
    env |= {
        "PATH": os.environ["PATH"],
        "DJANGO_SETTINGS_MODULE": "opsboard.settings",
        "OPSBOARD_SECRET_KEY": "s" * 50,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "OPSBOARD_STATE_DIR": str(tmp_path),
    }
    hosts = [f"{POD_IP}:8000", "opsboard-web", "opsboard.example.com", "evil.example.com"]

    def statuses(path: str) -> dict[str, int]:
        result = subprocess.run(
            [sys.executable, "-c", REQUEST, path, *hosts],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.strip().splitlines()[-1])

    assert statuses("/healthz") == dict.fromkeys(hosts, 200)
    login = statuses("/accounts/login/")
    assert login == {hosts[0]: 400, hosts[1]: 200, hosts[2]: 200, hosts[3]: 400}
