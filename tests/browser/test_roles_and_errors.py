"""In the browser, with mirror rows only (no cluster needed): find a CR, see its pods and
tree, have a bad value refused inline, and a viewer with disabled actions that say why and
a 403 on a forged POST."""

from __future__ import annotations

import pytest

from tests.browser.conftest import screenshot
from tests.dashboard.mirror_factory import memcached_with_pods
from tests.support.waiting import consistently

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_operator_finds_a_cr_and_a_bad_size_is_refused_inline(page_as, operator, settings,
                                                              tmp_path) -> None:  # fmt: skip
    settings.KUBECONFIG = str(tmp_path / "no-cluster")  # a bad value must never get that far
    memcached_with_pods("cache-a", size=3)
    memcached_with_pods("other", size=1)
    page = page_as(operator)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Memcached").click()
    page.get_by_label("Name or label=value").fill("cache")
    page.locator("#cr-rows tr", has_text="other").wait_for(state="detached")
    # The search box's own change event (as it loses focus: a result's link clicked) asks
    # for nothing more: a refresh then would push its URL over the click's navigation.
    refreshes: list[str] = []
    page.on("request", lambda r: refreshes.append(r.url) if "search=" in r.url
            and "shown=" not in r.url else None)  # fmt: skip
    page.get_by_label("Namespace").focus()
    consistently(lambda: not refreshes, for_s=1.0, what="no refresh as the search box blurs")
    page.get_by_role("link", name="cache-a").click()
    page.get_by_role("heading", name="Owner tree").wait_for()
    assert page.locator("[id^=cr-nodes-] tbody tr").count() == 3
    screenshot(page, "detail-operator")

    page.get_by_label("Size (replicas)").fill("-1")
    page.get_by_role("button", name="Review change").click()
    alert = page.locator("[id^=cr-patch-] .error[role=alert]")
    alert.wait_for()
    assert "greater than or equal to 0" in alert.inner_text()
    page.get_by_label("Size (replicas)").fill("three")
    page.get_by_role("button", name="Review change").click()
    page.get_by_text("Enter a whole number").wait_for()
    screenshot(page, "bad-size")


def test_viewer_sees_why_the_actions_are_disabled_and_a_forged_post_gets_403(
    page_as, viewer
) -> None:
    memcached_with_pods("cache-a", size=3)
    page = page_as(viewer)
    page.goto(page.url.rstrip("/") + "/k/memcached/default/cache-a/")
    page.get_by_role("heading", name="Owner tree").wait_for()
    assert page.get_by_label("Size (replicas)").count() == 0
    assert page.get_by_role("button", name="Reconcile now").is_disabled()
    assert "needs operator in default; you are viewer" in page.locator("[id^=cr-why-]").inner_text()
    status = page.evaluate(
        """async () => {
            const token = JSON.parse(document.body.getAttribute('hx-headers'))['X-CSRFToken'];
            const response = await fetch('patch/apply/', {method: 'POST',
                headers: {'X-CSRFToken': token, 'Content-Type': 'application/x-www-form-urlencoded'},
                body: 'size=9&image=memcached:1.6&resource_version=1'});
            return response.status;
        }"""
    )
    assert status == 403
