"""Every pod meets the "restricted" Pod Security Standard and has bounded resources."""

from __future__ import annotations

from typing import Any

from tests.deploy.kustomize import Manifest


def _pods(built: list[Manifest]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (doc["metadata"]["name"], doc["spec"]["template"]["spec"])
        for doc in built
        if doc["kind"] in {"Deployment", "StatefulSet"}
    ]


def _containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return spec["containers"] + spec.get("initContainers", [])


def test_there_are_pods_to_check(built: list[Manifest]) -> None:
    assert len(_pods(built)) == 5


def test_the_namespace_enforces_the_restricted_profile(built: list[Manifest]) -> None:
    [namespace] = [d for d in built if d["kind"] == "Namespace"]
    labels = namespace["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"


def test_every_pod_runs_as_non_root_with_the_runtime_default_seccomp_profile(
    built: list[Manifest],
) -> None:
    for name, spec in _pods(built):
        context = spec["securityContext"]
        assert context["runAsNonRoot"] is True, name
        assert context["runAsUser"] > 0, name
        assert context["seccompProfile"] == {"type": "RuntimeDefault"}, name
        assert not spec.get("hostNetwork") and not spec.get("hostPID"), name


def test_every_container_drops_all_capabilities_and_cannot_escalate(
    built: list[Manifest],
) -> None:
    for name, spec in _pods(built):
        for container in _containers(spec):
            context = container["securityContext"]
            where = f"{name}/{container['name']}"
            assert context["allowPrivilegeEscalation"] is False, where
            assert context["capabilities"] == {"drop": ["ALL"]}, where
            assert context["readOnlyRootFilesystem"] is True, where
            assert not context.get("privileged"), where


def test_every_writable_path_is_a_volume(built: list[Manifest]) -> None:
    for name, spec in _pods(built):
        volumes = {v["name"] for v in spec.get("volumes", [])}
        for container in spec["containers"]:
            mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
            if container["image"].startswith("opsboard"):
                # Python, gunicorn and Celery need a scratch /tmp; the state dir holds the
                # metrics files and beat's schedule.
                assert {"/tmp", "/var/lib/opsboard"} <= mounts.keys(), name
                assert set(mounts.values()) <= volumes, name


def test_every_container_requests_and_limits_cpu_and_memory(built: list[Manifest]) -> None:
    for name, spec in _pods(built):
        for container in _containers(spec):
            resources = container["resources"]
            for bound in ("requests", "limits"):
                assert {"cpu", "memory"} <= resources[bound].keys(), f"{name} {bound}"
