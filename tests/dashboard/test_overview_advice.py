"""The overview's "Needs attention" gives each CR's first finding and its advice. The advice
points to a section of the CR's page (Finding.see); each page words that pointer itself:
"below" on the CR's page, a link to it on the overview."""

from __future__ import annotations

from django.test import Client

from tests.dashboard.mirror_factory import memcached_with_pods
from tests.diagnosis.test_pages import _break_image, engine_up

__all__ = ["engine_up"]


def test_advice_to_revert_in_the_history_links_to_the_crs_change_history(
    operator_client: Client, operator, engine_up: None
) -> None:
    broken = memcached_with_pods("broken", size=1, namespace="shop")
    entry = _break_image(broken, user=operator)
    html = operator_client.get("/").content.decode()
    row = html[html.index('<tr data-code="ImagePullBackOff">') :]
    row = row[: row.index("</tr>")]
    assert f"revert change #{entry.pk}." in row
    assert "below" not in row, "no history below on the overview"
    assert 'See <a href="/k/memcached/shop/broken/#history">its change history</a>.' in row
    page = operator_client.get("/k/memcached/shop/broken/").content.decode()
    section = page[page.index('id="diagnosis"') : page.index('id="history"')]
    assert 'See the <a href="#history">change history</a> below.' in section  # there it is
