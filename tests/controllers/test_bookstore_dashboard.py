"""The dashboard shows a BookStore with no UI code: list, detail with status.nodes, and a
patch form bound to the app's replicas and image (nested spec paths)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from controllers.bookstore.desired import BOOKSTORE
from opsboard.dashboard.kinds import all_kinds
from tests.dashboard.mirror_factory import memcached_with_pods, mirror_object, running_pod

pytestmark = pytest.mark.django_db
SPEC = {
    "bookApp": {"image": "shop/app:1.0", "replicas": 2},
    "bookDB": {"image": "mongo:7.0", "replicas": 1, "dbSize": "2Gi"},
}


@pytest.fixture
def with_bookstore(settings: Any) -> Iterator[None]:
    settings.OPSBOARD_CONTROLLERS = [
        *[c for c in settings.OPSBOARD_CONTROLLERS if c != "controllers.bookstore"],
        "controllers.bookstore",
    ]  # registered by default today; the test holds whatever the defaults become
    all_kinds.cache_clear()
    yield
    all_kinds.cache_clear()


def _mirror_shop() -> None:
    nodes = ["shop-app-5d9c7-abcde", "shop-app-5d9c7-fghij", "shop-db-0"]
    cr = mirror_object(
        "BookStore",
        "shop",
        api_version=BOOKSTORE.api_version,
        spec=SPEC,
        status={"nodes": nodes, "readyReplicas": 2, "dbReadyReplicas": 1},
        health="Available",
    )
    for name in nodes:
        running_pod(name, owner=cr, labels={"app.kubernetes.io/instance": "shop"})


def test_the_list_shows_bookstores_with_their_printer_columns(
    with_bookstore: None, operator_client: Client
) -> None:
    _mirror_shop()
    assert 'href="/k/bookstore/"' in operator_client.get("/").content.decode()
    page = operator_client.get("/k/bookstore/")
    assert page.status_code == 200
    assert [row.cr.name for row in page.context["page"]] == ["shop"]
    html = page.content.decode()
    for text in ("DB Size", "2Gi", "shop/app:1.0"):
        assert text in html


def test_the_detail_lists_app_and_db_pods_and_patches_the_apps_replicas_and_image(
    with_bookstore: None, operator_client: Client
) -> None:
    _mirror_shop()
    page = operator_client.get("/k/bookstore/default/shop/")
    assert page.status_code == 200
    html = page.content.decode()
    for pod in ("shop-app-5d9c7-abcde", "shop-db-0"):
        assert pod in html
    assert 'name="size"' in html and 'value="2"' in html
    assert 'name="image"' in html and 'value="shop/app:1.0"' in html


def test_the_patch_form_takes_its_bounds_from_the_nested_schema(
    with_bookstore: None, operator_client: Client
) -> None:
    _mirror_shop()
    html = operator_client.post(
        "/k/bookstore/default/shop/patch/", {"size": "101"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "less than or equal to 100" in html


def test_the_patch_form_says_it_changes_the_app_not_the_db(
    with_bookstore: None, operator_client: Client
) -> None:
    _mirror_shop()
    form = operator_client.get("/k/bookstore/default/shop/").context["form"]
    assert (form["size"].label, form["image"].label) == ("App replicas", "App image")
    assert form["image"].help_text.endswith("Sets spec.bookApp.image only.")
    html = operator_client.get("/k/bookstore/default/shop/").content.decode()
    assert ">App replicas</label>" in html and ">App image</label>" in html
    assert ">Size (replicas)</label>" not in html


def test_a_kind_of_one_part_keeps_the_plain_labels(operator_client: Client) -> None:
    memcached_with_pods("cache-a", size=1)
    form = operator_client.get("/k/memcached/default/cache-a/").context["form"]
    assert (form["size"].label, form["image"].label) == ("Size (replicas)", "Image")


def test_the_databases_replicas_have_a_field_of_their_own_within_the_schemas_bounds(
    with_bookstore: None, operator_client: Client
) -> None:
    """The Diagnosis names spec.bookDB.replicas for database pods a quota refuses: the form
    sets it, apart from the app's replicas, within the CRD's 0..100."""
    _mirror_shop()
    form = operator_client.get("/k/bookstore/default/shop/").context["form"]
    field = form["size_mongodb"]
    assert (field.label, field.value()) == ("Replicas of mongodb", 1)
    assert field.help_text == (
        "A whole number from 0 to 100: how many pods of mongodb run. Sets spec.bookDB.replicas "
        "only."
    )
    posted = {"size": "2", "image": "shop/app:1.0", "image_mongodb": "mongo:7.0", "storage": "2Gi"}
    for value, error in (("101", "less than or equal to 100"), ("-1", "greater than or equal to 0"),
                         ("two", "Enter a whole number, like 1.")):  # fmt: skip
        html = operator_client.post(
            "/k/bookstore/default/shop/patch/", {**posted, "size_mongodb": value},
            HTTP_HX_REQUEST="true",
        ).content.decode()  # fmt: skip
        assert re.search(rf'id="id_size_mongodb_error"[^>]*>[^<]*{error}', html), (value, html)


def test_the_databases_image_has_a_field_of_its_own_checked_as_the_apps(
    with_bookstore: None, operator_client: Client
) -> None:
    _mirror_shop()
    form = operator_client.get("/k/bookstore/default/shop/").context["form"]
    field = form["image_mongodb"]
    assert (field.label, field.value()) == ("Image of mongodb", "mongo:7.0")
    assert field.help_text.endswith("Sets spec.bookDB.image only.")
    posted = {"size": "2", "image": "shop/app:1.0", "size_mongodb": "1", "storage": "2Gi"}
    html = operator_client.post(
        "/k/bookstore/default/shop/patch/", {**posted, "image_mongodb": "Mongo::7"},
        HTTP_HX_REQUEST="true",
    ).content.decode()  # fmt: skip
    assert re.search(r'id="id_image_mongodb_error"[^>]*>[^<]*Not a valid image reference', html)
