"""The diagnosis is read from the mirror: rendering it sends nothing to the API server."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from tests.dashboard.mirror_factory import memcached_with_pods

pytestmark = [pytest.mark.kubesim_only, pytest.mark.django_db]


def test_the_page_and_the_command_make_no_kubernetes_api_call(
    cluster_kube: Any, kubesim_server: Any, viewer_client: Client
) -> None:
    memcached_with_pods("cache", size=3, namespace="quiet")
    kubesim_server.clear_request_log()
    for url in ("/k/memcached/quiet/cache/", "/k/memcached/quiet/cache/live/"):
        response = viewer_client.get(url)
        assert response.status_code == 200 and b'id="diagnosis"' in response.content
    assert b'id="needs-attention"' in viewer_client.get("/").content
    call_command("opsboard_diagnose", "memcached", "quiet/cache", stdout=StringIO())
    assert kubesim_server.request_log() == []
