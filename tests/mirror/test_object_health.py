from __future__ import annotations

from opsboard.mirror.object_health import derive_health
from tests.mirror.factories import condition


def test_no_conditions_is_unknown() -> None:
    assert derive_health("Memcached", {}, stale=False) == "Unknown"


def test_degraded_true_wins_over_available() -> None:
    status = {"conditions": [condition("Available", "True"), condition("Degraded", "True")]}
    assert derive_health("Memcached", status, stale=False) == "Degraded"


def test_available_when_not_stale() -> None:
    status = {"conditions": [condition("Available", "True")]}
    assert derive_health("Memcached", status, stale=False) == "Available"


def test_available_but_stale_is_progressing() -> None:
    status = {"conditions": [condition("Available", "True")]}
    assert derive_health("Memcached", status, stale=True) == "Progressing"


def test_conditions_without_available_are_progressing() -> None:
    status = {"conditions": [condition("Progressing", "True"), condition("Available", "False")]}
    assert derive_health("Memcached", status, stale=False) == "Progressing"


def test_ready_pod_is_available() -> None:
    status = {"phase": "Running", "conditions": [condition("Ready", "True")]}
    assert derive_health("Pod", status, stale=False) == "Available"


def test_pod_in_image_pull_backoff_is_degraded() -> None:
    waiting = {"state": {"waiting": {"reason": "ImagePullBackOff"}}}
    status = {"phase": "Pending", "containerStatuses": [waiting]}
    assert derive_health("Pod", status, stale=False) == "Degraded"
