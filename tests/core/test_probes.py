from __future__ import annotations

import pytest
from django.test import Client, override_settings

from opsboard.embedded.ports import free_port
from opsboard.embedded.redis import EmbeddedRedis


def test_healthz_answers_without_a_database_or_login(client: Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_is_ready_when_database_and_redis_answer(
    client: Client, redis_server: EmbeddedRedis
) -> None:
    with override_settings(REDIS_URL=redis_server.url):
        response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "redis": "ok"}


@pytest.mark.django_db
def test_readyz_is_unavailable_and_says_what_when_redis_is_down(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    port = free_port()
    with override_settings(REDIS_URL=f"redis://127.0.0.1:{port}/0"):
        response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable", "database": "ok", "redis": "unavailable"}
    # The address is for the log, not for whoever asks: /readyz answers anyone.
    assert str(port) not in response.content.decode()
    assert any(str(port) in r.getMessage() for r in caplog.records if r.name.endswith("probes"))


def test_probes_refuse_writes(client: Client) -> None:
    assert client.post("/healthz").status_code == 405


@pytest.mark.django_db
def test_probes_answer_whatever_host_the_kubelet_uses(
    client: Client, redis_server: EmbeddedRedis
) -> None:
    assert client.get("/healthz", HTTP_HOST="10.244.1.7:8000").status_code == 200
    with override_settings(REDIS_URL=redis_server.url):
        assert client.get("/readyz", HTTP_HOST="10.244.1.7:8000").status_code == 200
    # Everything else still refuses a Host outside ALLOWED_HOSTS.
    assert client.get("/accounts/login/", HTTP_HOST="10.244.1.7:8000").status_code == 400
