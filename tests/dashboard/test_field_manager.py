"""The dashboard's patches name their writer: "opsboard-web" as field manager and user
agent, so the cluster tells them from the operators' writes ("opsboard") and from any
other Python client. Its request log shows what was sent (managedFields, which kubesim
keeps too, say only who last owned each field)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from controllers.kube import ApiKube
from opsboard.dashboard.crclient import WEB_FIELD_MANAGER
from tests.dashboard.test_patch_cluster import cache_a
from tests.support.review import review_and_apply

pytestmark = [pytest.mark.django_db, pytest.mark.kubesim_only]
__all__ = ["cache_a"]


def _apply(client: Client, url: str, size: str, image: str) -> None:
    assert "Applied:" in review_and_apply(client, url, {"size": size, "image": image})


def test_a_size_through_scale_and_an_image_patch_name_opsboard_web(
    operator_client: Client, cluster_kube: ApiKube, cache_a: str, kubesim_server: Any
) -> None:
    kubesim_server.clear_request_log()
    _apply(operator_client, cache_a, "5", "memcached:1.4.36-alpine")  # /scale
    _apply(operator_client, cache_a, "5", "memcached:1.6.21-alpine")  # a merge patch
    patches = kubesim_server.request_log(verb="patch", resource="memcacheds")
    # Each change: its dry run, then the patch itself.
    assert sorted(r.subresource for r in patches) == ["", "", "scale", "scale"]
    assert {(r.field_manager, r.user_agent) for r in patches} == {
        (WEB_FIELD_MANAGER, WEB_FIELD_MANAGER)
    }
