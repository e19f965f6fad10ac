"""Every page an admin reaches from the login form loads in the browser with nothing
failing: no console error (a script or style the Content-Security-Policy blocks is one), no
request answered 4xx or 5xx (the icon included)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Response

from tests.browser.conftest import log_in
from tests.dashboard.mirror_factory import memcached_with_pods

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PAGES = ["/", "/crs/", "/k/memcached/", "/k/memcached/default/cache-a/", "/audit/",
         "/audit/runs/", "/audit/charts/", "/admin/", "/admin/auth/user/1/change/"]  # fmt: skip


def test_the_pages_load_without_a_console_error_or_a_failed_request(
    browser, live_server, admin_user
) -> None:
    memcached_with_pods("cache-a", size=2)
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    failures: list[str] = []
    page.on(
        "console",
        lambda m: failures.append(f"console: {m.text} ({page.url})") if m.type == "error" else None,
    )
    page.on(
        "response",
        lambda r: failures.append(f"{r.status} {r.url}") if r.status >= 400 else None,
    )
    try:
        log_in(page, live_server.url, admin_user)  # listened to from the login page on
        icon = page.locator("link[rel=icon]").get_attribute("href")
        assert icon and page.request.get(f"{live_server.url}{icon}").ok
        for path in PAGES:
            response: Response | None = page.goto(f"{live_server.url}{path}")
            assert response is not None and response.status == 200, path
            assert "script-src 'self'" in response.headers["content-security-policy"], path
            page.wait_for_load_state("networkidle")
    finally:
        context.close()
    assert failures == []
