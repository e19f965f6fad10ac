"""The overview's "Needs attention" gives each CR's first finding and its advice, which is
written for the CR's own page: what it points to there is a link away on the overview."""

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
    assert f"revert change #{entry.pk}" in row
    assert "in the history below" not in row, "no history below on the overview"
    assert 'in <a href="/k/memcached/shop/broken/#history">its change history</a>.' in row
    page = operator_client.get("/k/memcached/shop/broken/").content.decode()
    assert 'id="history"' in page and "in the history below" in page  # there it is below
