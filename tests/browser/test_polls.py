"""Live fragments in a browser (the overview, a CR list's rows and count): a poll of an unchanged
fragment is answered 204 and htmx keeps the page and goes on polling; a change shows at
the next poll. A CR's page keeps a person's opened lists and selection through its polls."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Response

from opsboard.engine.models import ReconcileRun
from opsboard.mirror.models import KubeObject
from tests.browser.conftest import log_in, screenshot
from tests.dashboard.mirror_factory import memcached_with_pods

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _run(name: str, **fields: object) -> None:
    ReconcileRun.objects.create(**{
        "controller": "memcached", "namespace": "default", "name": name, "uid": "u",
        "generation": 1, "trigger": "event", "outcome": "success",
        "started_at": timezone.now() - timedelta(minutes=2),
        "actions": ["Created Deployment x"], **fields,
    })  # fmt: skip


def _is_poll(response: Response) -> bool:
    return "?shown=" in response.url


def _rendered(response: Response) -> bool:
    # Not merely the next poll: one sent just before the run was written may answer 204.
    return _is_poll(response) and response.status == 200


def test_an_unchanged_overview_stays_and_a_change_shows_at_the_next_poll(
    page_as, viewer, one_poll_window: None
) -> None:
    _run("first")
    page = page_as(viewer)
    page.get_by_text("memcached default/first").first.wait_for()
    with page.expect_response(_is_poll) as unchanged:
        pass
    assert unchanged.value.status == 204
    assert page.get_by_text("memcached default/first").first.is_visible()

    _run("second")
    with page.expect_response(_rendered):
        pass
    page.get_by_text("memcached default/second").first.wait_for()
    with page.expect_response(_is_poll) as again:
        pass
    assert again.value.status == 204, "the swapped fragment polls with its new token"
    assert page.get_by_text("memcached default/second").first.is_visible()


def test_unchanged_rows_stay_and_a_changed_row_shows_at_the_next_poll(
    page_as, viewer, one_poll_window: None
) -> None:
    cr = memcached_with_pods("cache-a", size=2)
    page = page_as(viewer)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Memcached").click()
    row = page.locator("#cr-rows tr", has_text="cache-a")
    row.locator(".h-available").wait_for()
    with page.expect_response(_is_poll) as unchanged:
        pass
    assert unchanged.value.status == 204
    assert row.locator(".h-available").is_visible()

    KubeObject.objects.filter(pk=cr.pk).update(health="Degraded")
    with page.expect_response(_rendered):
        pass
    row.locator(".h-degraded").wait_for()
    with page.expect_response(_is_poll) as again:
        pass
    assert again.value.status == 204, "the swapped rows poll with their new token"

    memcached_with_pods("cache-b", size=1)  # the count above the rows follows them
    page.locator("#cr-count", has_text="2 resources").wait_for()
    page.locator("#cr-rows tr", has_text="cache-b").wait_for()


def test_a_cr_page_keeps_what_a_person_opened_and_selected_through_its_polls(
    page_as, viewer, live_server
) -> None:
    cr = memcached_with_pods("cache-a", size=1)
    triggers = [
        {"trigger": "event", "detail": "MODIFIED Pod default/cache-a-1", "at": 1.5},
        {"trigger": "event", "detail": "MODIFIED Deployment default/cache-a", "at": 0.5},
    ]
    _run("cache-a", triggers=triggers)
    page = page_as(viewer)
    page.goto(f"{live_server.url}/k/memcached/default/cache-a/")
    merged = page.locator(".timeline details.merged")
    merged.locator("summary").click()
    yaml = page.locator(f"#cr-yaml-{cr.uid}")
    yaml.locator("summary").click()
    page.locator("#spec-h").select_text()
    with page.expect_response(lambda r: "/live/?shown=" in r.url) as unchanged:
        pass
    assert unchanged.value.status == 204
    assert merged.evaluate("d => d.open") and yaml.evaluate("d => d.open")
    assert page.evaluate("String(getSelection())") == "Spec", "nothing swapped, nothing lost"

    # A size change and its run: the sections are swapped, what was open stays open.
    KubeObject.objects.filter(pk=cr.pk).update(
        spec={**cr.spec, "size": 2}, body={**cr.body, "spec": {**cr.body["spec"], "size": 2}}
    )
    _run("cache-a", actions=["Updated Deployment cache-a replicas 1→2"])
    page.get_by_text("Updated Deployment cache-a replicas 1→2").wait_for()
    assert merged.evaluate("d => d.open"), "the swap closed the list the person opened"
    assert "MODIFIED Deployment default/cache-a" in merged.inner_text()
    assert yaml.evaluate("d => d.open") and "size: 2" in yaml.inner_text(), "the YAML follows"


def _set_visibility(page, state: str) -> None:
    """What the browser says and does when the tab is hidden or shown again."""
    page.evaluate(
        """state => {
            Object.defineProperty(document, "visibilityState", {value: state, configurable: true});
            document.dispatchEvent(new Event("visibilitychange"));
        }""",
        state,
    )


def test_a_hidden_tab_sends_no_poll_and_polls_again_once_shown(
    page_as, viewer, one_poll_window: None
) -> None:
    memcached_with_pods("cache-a", size=1)
    page = page_as(viewer)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Memcached").click()
    with page.expect_response(_is_poll):
        pass  # polling
    polls: list[str] = []
    page.on("request", lambda r: polls.append(r.url) if "?shown=" in r.url else None)
    _set_visibility(page, "hidden")
    page.wait_for_timeout(5_000)  # two poll intervals and more
    assert polls == [], "a hidden tab polled"
    _set_visibility(page, "visible")
    with page.expect_response(_is_poll) as resumed:
        pass
    assert resumed.value.status == 204


def test_a_page_says_while_opsboard_is_out_of_reach_and_stops_once_it_is_back(
    browser, stoppable_server, viewer
) -> None:
    """While nothing answers, the page must not go on saying "Mirror live" as if current."""
    memcached_with_pods("cache-a", size=1)
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    try:
        page = context.new_page()
        page.set_default_timeout(15_000)
        log_in(page, stoppable_server.url, viewer)
        page.goto(f"{stoppable_server.url}/k/memcached/default/cache-a/")
        with page.expect_response(lambda r: "/live/?shown=" in r.url):
            pass  # polling
        lost = page.get_by_role("alert").filter(has_text="Lost contact with opsboard")
        assert lost.count() == 0

        stoppable_server.stop()
        lost.wait_for()
        assert "retrying; what you see may be out of date" in lost.inner_text()
        screenshot(page, "contact-lost")
        stoppable_server.start()
        lost.wait_for(state="detached")
        page.get_by_text("Mirror live").or_(page.get_by_text("The watcher is down")).wait_for()
    finally:
        context.close()
