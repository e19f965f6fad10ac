"""The overview's poll: nothing to swap (204) while what it shows is unchanged, a render as
soon as any of it changes, and at least once a minute."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from controllers.memcached.desired import MEMCACHED
from opsboard.dashboard import polling
from opsboard.engine.models import ReconcileRun
from opsboard.mirror.models import KubeObject
from opsboard.mirror.writer import kind_watches_save
from tests.dashboard.mirror_factory import MEMCACHED_API, mirror_object

# The windows themselves are tested on their own (the last test).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("one_poll_window")]
POLL = re.compile(r'id="overview-live" hx-get="/\?shown=([0-9a-f]+)"')


def _shown(html: str) -> str:
    found = POLL.search(html)
    assert found, "the fragment polls with the token of what it shows"
    return found.group(1)


def _poll(client: Client, shown: str) -> tuple[int, str]:
    response = client.get("/", {"shown": shown}, HTTP_HX_REQUEST="true")
    return response.status_code, response.content.decode()


def _run(name: str, *, minutes_ago: float = 5) -> ReconcileRun:
    return ReconcileRun.objects.create(
        controller="memcached", namespace="default", name=name, uid="u", generation=1,
        trigger="event", started_at=timezone.now() - timedelta(minutes=minutes_ago),
        outcome="success", actions=["Created Deployment x"],
    )  # fmt: skip


def test_a_poll_of_an_unchanged_overview_gets_nothing_to_swap(viewer_client: Client) -> None:
    mirror_object("Memcached", "a", api_version=MEMCACHED_API, health="Available")
    _run("a")
    shown = _shown(viewer_client.get("/").content.decode())  # the page, as a tab opens it
    assert _poll(viewer_client, shown) == (204, "")
    assert _poll(viewer_client, shown) == (204, "")
    status, html = _poll(viewer_client, "0000000000000000")  # another page's token
    assert status == 200 and _shown(html) == shown
    reload = viewer_client.get("/", {"shown": shown})  # not htmx: a reload renders the page
    assert reload.status_code == 200 and b"<h1>Overview</h1>" in reload.content


def test_a_new_run_renders_the_overview_again(viewer_client: Client) -> None:
    _run("a")
    shown = _shown(viewer_client.get("/").content.decode())
    _run("b", minutes_ago=1)  # "1m ago" for a minute: seconds would turn between polls
    status, html = _poll(viewer_client, shown)
    assert status == 200
    assert "memcached default/b" in html
    assert _shown(html) != shown
    assert _poll(viewer_client, _shown(html))[0] == 204


def test_a_run_folded_into_the_last_one_renders_it_again(viewer_client: Client) -> None:
    run = _run("a")
    shown = _shown(viewer_client.get("/").content.decode())
    ReconcileRun.objects.filter(id=run.id).update(folded_count=1, last_folded_at=timezone.now())
    status, html = _poll(viewer_client, shown)
    assert status == 200
    assert "\u00d72" in html, "the folded run's count"


def test_a_mirrored_change_renders_the_overview_again(viewer_client: Client) -> None:
    # Saving its resume points after mirroring a change, the watcher stamps the kind's last
    # event: the token follows that stamp, not every row of the mirror.
    mirror_object("Memcached", "a", api_version=MEMCACHED_API, health="Available")
    kind_watches_save({MEMCACHED: ("100", True, True)})
    shown = _shown(viewer_client.get("/").content.decode())
    KubeObject.objects.filter(name="a").update(health="Degraded")
    kind_watches_save({MEMCACHED: ("101", False, True)})
    status, html = _poll(viewer_client, shown)
    assert status == 200
    assert 'h-degraded" href="/k/memcached/?health=Degraded">Degraded <b>1</b>' in html


def test_a_bookmark_alone_renders_nothing(viewer_client: Client) -> None:
    # A watch's bookmark moves the resume point (to the server's newest resourceVersion,
    # which any write anywhere advances) and changes nothing in the mirror.
    mirror_object("Memcached", "a", api_version=MEMCACHED_API, health="Available")
    kind_watches_save({MEMCACHED: ("100", True, True)})
    shown = _shown(viewer_client.get("/").content.decode())
    kind_watches_save({MEMCACHED: ("150", False, False)})
    assert _poll(viewer_client, shown) == (204, "")


def test_the_token_changes_with_the_minute_even_when_nothing_else_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(polling, "RENDER_EVERY", 60)
    parts = ("the same", 1)
    assert polling.token(*parts, now=120.0) == polling.token(*parts, now=179.9)
    assert polling.token(*parts, now=120.0) != polling.token(*parts, now=180.0)
    assert polling.token(*parts, now=120.0) != polling.token("other", 1, now=120.0)
