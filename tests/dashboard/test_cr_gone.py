"""A CR deleted while its page is open (read from the mirror alone): the live sections' poll
gets a notice in their place, with the actions disabled, and polls no more (htmx's 286);
opening its URL is a 404 that says what happened; a CR being deleted says "Terminating"."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from opsboard.dashboard.polling import STOP_POLLING
from opsboard.engine.models import ReconcileRun
from opsboard.mirror.models import KubeObject
from tests.dashboard.mirror_factory import MEMCACHED_API, memcached_with_pods, mirror_object
from tests.dashboard.polls import poll, poll_url

pytestmark = pytest.mark.django_db
PAGE = "/k/memcached/default/cache-a/"
POLL = re.compile(r'<div id="cr-live-[^"]+" hx-get="([^"]+)"')
DISABLED_REVIEW = re.compile(r'<button type="button" disabled[^>]*>Review change</button>')


def _deleted(cr: KubeObject, *, minutes_ago: int = 3) -> None:
    """What the engine leaves once it has seen the CR deleted: no row in the mirror, and the
    run its DELETED event queued."""
    ReconcileRun.objects.create(
        controller="memcached", namespace=cr.namespace, name=cr.name, generation=None,
        trigger="event", trigger_detail=f"DELETED Memcached {cr.namespace}/{cr.name}",
        started_at=timezone.now() - timedelta(minutes=minutes_ago), outcome="success",
    )  # fmt: skip
    KubeObject.objects.filter(pk=cr.pk).delete()


def _page_poll(client: Client, cr: KubeObject) -> str:
    """The live sections' poll as htmx sends it from the page: with the page's hx-vals."""
    page = client.get(PAGE).content.decode()
    assert f"""hx-vals='{{"uid": "{cr.uid}"}}'""" in page
    return f"{poll_url(POLL, page)}&uid={cr.uid}"


def test_the_poll_of_a_deleted_cr_says_so_disables_the_actions_and_stops(
    operator_client: Client,
) -> None:
    cr = memcached_with_pods("cache-a", size=1)
    url = _page_poll(operator_client, cr)
    assert poll(operator_client, url) == (204, "")
    _deleted(cr)

    status, html = poll(operator_client, url)
    assert status == STOP_POLLING == 286
    assert "Memcached default/cache-a was deleted about" in html and "3m ago" in html
    assert f'<div id="cr-live-{cr.uid}" class="gone">' in html
    assert "hx-trigger" not in html and "hx-get" not in html  # nothing polls again
    assert "Healthy" not in html and "Available" not in html
    assert f'<div class="two" id="cr-actions-{cr.uid}" hx-swap-oob="true">' in html
    assert DISABLED_REVIEW.search(html) and "<form" not in html
    assert re.search(r"<button type=\"button\" disabled[^>]*>Reconcile now</button>", html)
    assert '<a href="/k/memcached/">Back to the Memcached list</a>' in html


def test_a_cr_deleted_and_created_again_is_not_taken_for_the_one_the_page_showed(
    viewer_client: Client,
) -> None:
    cr = memcached_with_pods("cache-a", size=1)
    url = _page_poll(viewer_client, cr)
    KubeObject.objects.filter(pk=cr.pk).delete()
    mirror_object("Memcached", "cache-a", api_version=MEMCACHED_API, health="Available")

    status, html = poll(viewer_client, url)
    assert status == STOP_POLLING
    assert "Memcached default/cache-a was deleted." in html
    assert f'Another Memcached of that name exists now: <a href="{PAGE}">open it</a>' in html


def test_opening_the_url_of_a_deleted_cr_is_a_404_that_says_when_and_links_the_list(
    viewer_client: Client,
) -> None:
    _deleted(memcached_with_pods("cache-a", size=1), minutes_ago=7)
    response = viewer_client.get(PAGE)
    assert response.status_code == 404
    html = response.content.decode()
    assert "Memcached default/cache-a was deleted about" in html and "7m ago" in html
    assert '<a href="/k/memcached/">Back to the Memcached list</a>' in html
    assert "hx-get" not in html


def test_a_cr_waiting_for_its_finalizers_says_it_is_terminating(viewer_client: Client) -> None:
    cr = memcached_with_pods("cache-a", size=1)
    html = viewer_client.get(PAGE).content.decode()
    assert "Terminating" not in html
    meta = {**cr.body["metadata"], "finalizers": ["cache.example.com/cleanup"]}
    asked = timezone.now() - timedelta(minutes=2)
    meta["deletionTimestamp"] = asked.strftime("%Y-%m-%dT%H:%M:%SZ")
    KubeObject.objects.filter(pk=cr.pk).update(deleted_at=asked, body={**cr.body, "metadata": meta})

    html = viewer_client.get(PAGE).content.decode()
    assert '<span class="badge h-stale">Terminating</span>' in html
    terminating = re.search(rf'<p [^>]*id="cr-terminating-{cr.uid}">(.*?)</p>', html, re.S)
    assert terminating, "the status says why"
    assert "2m ago" in terminating.group(1)
    assert "waits for its finalizers (cache.example.com/cleanup)" in terminating.group(1)
    assert "Healthy" not in html  # the diagnosis names the finalizer instead
