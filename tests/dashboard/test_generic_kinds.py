"""The UI is generic over the registered controllers: a new one appears without UI changes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import Client

from opsboard.dashboard.kinds import all_kinds
from tests.dashboard.mirror_factory import mirror_object

pytestmark = pytest.mark.django_db


@pytest.fixture
def with_widgets(settings) -> Iterator[None]:
    settings.OPSBOARD_CONTROLLERS = [
        *settings.OPSBOARD_CONTROLLERS,
        "tests.dashboard.toy_controller",
    ]
    all_kinds.cache_clear()
    yield
    all_kinds.cache_clear()


def test_a_new_controller_gets_its_nav_link_list_and_detail(
    with_widgets, operator_client: Client
) -> None:
    mirror_object("Widget", "w-1", api_version="toys.example.com/v1", spec={"replicas": 2},
                  health="Available")  # fmt: skip
    overview = operator_client.get("/").content.decode()
    assert 'href="/k/widget/"' in overview
    assert [row.cr.name for row in operator_client.get("/k/widget/").context["page"]] == ["w-1"]
    detail = operator_client.get("/k/widget/default/w-1/").content.decode()
    assert "not there: the next reconcile creates it" in detail
    assert 'name="size"' in detail and 'name="image"' not in detail


def test_without_a_crd_schema_the_size_still_has_sane_bounds(
    with_widgets, operator_client: Client
) -> None:
    mirror_object("Widget", "w-1", api_version="toys.example.com/v1", spec={"replicas": 2})
    html = operator_client.post("/k/widget/default/w-1/patch/", {"size": "100000"},
                                HTTP_HX_REQUEST="true").content.decode()  # fmt: skip
    assert "less than or equal to 1000" in html


def test_kinds_read_bounds_and_printer_columns_from_the_crd_files() -> None:
    memcached = all_kinds()["memcached"]
    assert memcached.field_schema("spec.size")["maximum"] == 100
    # Ready and Image are the list's own columns (its bar, its image): not printed twice.
    assert [c.name for c in memcached.columns] == ["Size"]
    assert (memcached.replicas_path, memcached.ready_path) == ("spec.size", "status.readyReplicas")
    assert memcached.desired_path == "spec.size"
    ptemplate = all_kinds()["ptemplate"]  # no scale subresource: its printer columns count
    assert [c.name for c in ptemplate.columns] == ["Module", "Devices", "Desired"]
    assert (ptemplate.replicas_path, ptemplate.desired_path, ptemplate.ready_path) == (
        None,
        "status.desiredNumberScheduled",
        "status.numberReady",
    )
