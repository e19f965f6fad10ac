"""k8s/overlays/impersonate: the install with OPSBOARD_KUBE_IMPERSONATE=true, and the only
place where the opsboard-web ClusterRole may impersonate."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.deploy.kustomize import Manifest, copy_with_secrets, documents, kustomize

IMPERSONATE = {"apiGroups": [""], "resources": ["users", "groups"], "verbs": ["impersonate"]}


@pytest.fixture(scope="module")
def overlay(tmp_path_factory: pytest.TempPathFactory) -> list[Manifest]:
    deploy = copy_with_secrets(tmp_path_factory.mktemp("k8s"))
    result = kustomize(Path(deploy).parent / "overlays" / "impersonate")
    assert result.returncode == 0, result.stderr
    return documents(result.stdout)


def _web_role(built: list[Manifest]) -> Manifest:
    [role] = [
        d for d in built if d["kind"] == "ClusterRole" and d["metadata"]["name"] == "opsboard-web"
    ]
    return role


def test_only_the_overlay_lets_the_web_impersonate(overlay: list[Manifest],
                                                   built: list[Manifest]) -> None:  # fmt: skip
    assert IMPERSONATE in _web_role(overlay)["rules"]
    assert not any("impersonate" in r["verbs"] for r in _web_role(built)["rules"])
    # Nothing else gains it: no other role of the install may impersonate.
    others = [
        d for d in overlay if d["kind"] in ("ClusterRole", "Role") and d is not _web_role(overlay)
    ]
    assert not any(
        "impersonate" in r.get("verbs", []) for d in others for r in d.get("rules") or []
    )


def test_the_overlay_turns_impersonation_on_for_the_pods(overlay: list[Manifest]) -> None:
    [settings] = [d for d in overlay if d["kind"] == "ConfigMap"
                  and d["metadata"]["name"].startswith("opsboard-settings")]  # fmt: skip
    assert settings["data"]["OPSBOARD_KUBE_IMPERSONATE"] == "true"
    [web] = [
        d for d in overlay if d["kind"] == "Deployment" and d["metadata"]["name"] == "opsboard-web"
    ]
    sources = web["spec"]["template"]["spec"]["containers"][0].get("envFrom") or []
    assert {"configMapRef": {"name": settings["metadata"]["name"]}} in sources
