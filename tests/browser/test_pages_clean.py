"""Every page an admin reaches from the login form loads in the browser with nothing
failing: no console error, no request answered 4xx or 5xx (the icon included)."""

from __future__ import annotations

import pytest
from playwright.sync_api import ConsoleMessage, Response

from tests.accounts.users import PASSWORD
from tests.dashboard.mirror_factory import memcached_with_pods

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PAGES = ["/", "/crs/", "/k/memcached/", "/k/memcached/default/cache-a/", "/audit/",
         "/audit/runs/", "/audit/charts/"]  # fmt: skip


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
        lambda m: failures.append(f"console: {m.text} ({page.url})") if _bad(m) else None,
    )
    page.on(
        "response",
        lambda r: failures.append(f"{r.status} {r.url}") if r.status >= 400 else None,
    )
    try:
        page.goto(f"{live_server.url}/")
        page.get_by_label("Username").fill(admin_user.username)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.get_by_role("heading", name="Overview").wait_for()
        icon = page.locator("link[rel=icon]").get_attribute("href")
        assert icon and page.request.get(f"{live_server.url}{icon}").ok
        for path in PAGES:
            response: Response | None = page.goto(f"{live_server.url}{path}")
            assert response is not None and response.status == 200, path
            page.wait_for_load_state("networkidle")
    finally:
        context.close()
    assert failures == []


def _bad(message: ConsoleMessage) -> bool:
    return message.type == "error"
