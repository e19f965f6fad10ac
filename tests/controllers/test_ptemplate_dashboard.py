"""The dashboard shows Ptemplates generically: list, detail (status.nodes) and the image form."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from opsboard.dashboard.kinds import all_kinds
from tests.controllers.ptemplate_helpers import SPEC
from tests.dashboard.mirror_factory import mirror_object

pytestmark = pytest.mark.django_db


@pytest.fixture
def with_ptemplate(settings: Any) -> Iterator[None]:
    settings.OPSBOARD_CONTROLLERS = [
        *[c for c in settings.OPSBOARD_CONTROLLERS if c != "controllers.ptemplate"],
        "controllers.ptemplate",
    ]
    all_kinds.cache_clear()
    yield
    all_kinds.cache_clear()


def test_list_and_detail_render_with_nodes_and_an_image_form_only(
    with_ptemplate: None, operator_client: Client
) -> None:
    status = {
        "nodes": ["pt-consumer-abcde", "pt-consumer-fghij"],
        "desiredNumberScheduled": 2,
        "numberReady": 2,
        "moduleName": "pt",
        "modulePresent": True,
    }
    mirror_object("Ptemplate", "pt", api_version="hwe.example.com/v1alpha1",
                  spec={**SPEC, "deviceCount": 2}, status=status, health="Available")  # fmt: skip
    listing = operator_client.get("/k/ptemplate/")
    assert listing.status_code == 200
    assert [row.cr.name for row in listing.context["page"]] == ["pt"]
    html = listing.content.decode()
    assert "accel_drv" in html and SPEC["image"] in html  # printer columns
    detail = operator_client.get("/k/ptemplate/default/pt/")
    assert detail.status_code == 200
    page = detail.content.decode()
    assert "pt-consumer-abcde" in page
    assert 'name="image"' in page and 'name="size"' not in page
