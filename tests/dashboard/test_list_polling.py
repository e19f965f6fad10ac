"""A CR list's table polls with the token of what it shows: nothing to swap (204) while
it holds, a render as soon as a row, the count, the rows chosen or an age as printed
changes."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from opsboard.engine.models import ReconcileRun
from opsboard.mirror.models import KubeObject
from tests.dashboard.mirror_factory import MEMCACHED_API, memcached_with_pods, mirror_object
from tests.dashboard.polls import poll, poll_url

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("one_poll_window")]
POLL = re.compile(r'<tbody id="cr-rows" hx-get="([^"]+)"')


def test_unchanged_rows_get_nothing_to_swap_and_keep_their_filters(viewer_client: Client) -> None:
    memcached_with_pods("cache-a", size=2)
    memcached_with_pods("cache-b", size=1)
    url = poll_url(POLL, viewer_client.get("/k/memcached/", {"search": "cache-a"}).content.decode())
    assert url.startswith("/k/memcached/?search=cache-a&shown=")
    assert poll(viewer_client, url) == (204, "")
    assert poll(viewer_client, url) == (204, "")
    # The same token with other filters is another list's: rendered, and the poll's own
    # token is not mistaken for a filter.
    status, rows = poll(viewer_client, url.replace("search=cache-a", "search=cache-b"))
    assert status == 200 and "cache-b" in rows and "cache-a" not in rows
    links = POLL.sub("", rows)
    assert "shown=" not in links, "only the poll carries a token, not the sort or page links"
    reload = viewer_client.get(url)  # not htmx: the whole page
    assert reload.status_code == 200 and b"<h1>Memcached" in reload.content


def test_a_row_that_changes_renders_the_rows_again(viewer_client: Client) -> None:
    cr = memcached_with_pods("cache-a", size=2)
    url = poll_url(POLL, viewer_client.get("/k/memcached/").content.decode())
    KubeObject.objects.filter(pk=cr.pk).update(health="Degraded")
    status, rows = poll(viewer_client, url)
    assert status == 200 and "h-degraded" in rows

    url = poll_url(POLL, rows)
    KubeObject.objects.filter(pk=cr.pk).update(status={**cr.status, "readyReplicas": 1})
    status, rows = poll(viewer_client, url)
    assert status == 200 and "<small>1/2</small>" in rows

    url = poll_url(POLL, rows)
    KubeObject.objects.filter(pk=cr.pk).update(observed_generation=0)  # the status behind
    status, rows = poll(viewer_client, url)
    assert status == 200 and "status describes generation 0, spec is at 1" in rows
    assert poll(viewer_client, poll_url(POLL, rows)) == (204, "")


def test_a_new_run_or_a_new_cr_renders_the_rows_again(viewer_client: Client) -> None:
    memcached_with_pods("cache-a", size=1)
    url = poll_url(POLL, viewer_client.get("/k/memcached/").content.decode())
    ReconcileRun.objects.create(
        controller="memcached", namespace="default", name="cache-a", uid="u", generation=1,
        trigger="event", started_at=timezone.now(), outcome="error", actions=[],
    )  # fmt: skip
    status, rows = poll(viewer_client, url)
    assert status == 200 and 'class="badge o-error"' in rows

    url = poll_url(POLL, rows)
    mirror_object("Memcached", "cache-new", api_version=MEMCACHED_API, health="Progressing")
    status, rows = poll(viewer_client, url)
    assert status == 200 and "cache-new" in rows


def test_an_age_that_turns_renders_the_rows_again(viewer_client: Client) -> None:
    cr = memcached_with_pods("cache-a", size=1)
    KubeObject.objects.filter(pk=cr.pk).update(created_at=timezone.now() - timedelta(hours=2))
    url = poll_url(POLL, viewer_client.get("/k/memcached/").content.decode())
    # As if an hour had passed: the row's age reads "3h" now.
    KubeObject.objects.filter(pk=cr.pk).update(created_at=timezone.now() - timedelta(hours=3))
    status, rows = poll(viewer_client, url)
    assert status == 200 and "<td>3h</td>" in rows


def test_a_cr_beyond_the_page_renders_the_count_again(viewer_client: Client) -> None:
    KubeObject.objects.bulk_create(
        [mirror_object("Memcached", f"cache-{i:02}", api_version=MEMCACHED_API, save=False)
         for i in range(50)]
    )  # fmt: skip
    url = poll_url(POLL, viewer_client.get("/k/memcached/").content.decode())
    mirror_object("Memcached", "zz-last", api_version=MEMCACHED_API)  # sorts onto page 2
    first = viewer_client.get("/k/memcached/", {"search": "-"}).content.decode()
    assert 'href="?search=-&amp;page=2" hx-get="?search=-&amp;page=2"' in first, "the pager"
    status, table = poll(viewer_client, url)
    assert status == 200 and "51 resources · page 1 of 2" in table and "zz-last" not in table


def test_rendered_rows_renew_the_mirrors_freshness_with_them(viewer_client: Client) -> None:
    """The banner above ("Mirror live · last change 40s ago") is outside the rows: they
    carry it out of band (htmx's hx-swap-oob), or it would stay as the page was loaded."""
    from opsboard.mirror.models import KindWatch, WatcherHeartbeat

    now = timezone.now()
    WatcherHeartbeat.objects.create(identity="w", is_leader=True, started_at=now, heartbeat_at=now)
    watch = KindWatch.objects.create(
        api_version="v1", kind="Memcached", last_event_at=now - timedelta(seconds=40)
    )
    cr = memcached_with_pods("cache-a", size=1)
    page = viewer_client.get("/k/memcached/").content.decode()
    assert page.count('id="mirror-banner"') == 1 and "hx-swap-oob" not in page
    assert "last change 40s ago" in page
    KubeObject.objects.filter(pk=cr.pk).update(health="Degraded")
    watch.last_event_at = timezone.now()
    watch.save()
    status, rows = poll(viewer_client, poll_url(POLL, page))
    assert status == 200
    assert '<div id="mirror-banner" hx-swap-oob="true">' in rows
    assert "Mirror live · last change 0s ago" in rows
