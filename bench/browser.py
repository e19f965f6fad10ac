"""A real browser on the product: Debian's chromium driven by Playwright, logged in as the
bench's viewer, a tab open on the overview (as tests/browser/conftest.py launches it)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import psutil

from bench.cpu import tree
from bench.stack import Stack, StackError
from bench.web import USERNAME, viewer_password

if TYPE_CHECKING:
    from playwright.sync_api import Page, Request

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
]  # fmt: skip


@dataclass
class Tab:
    page: Page
    driver_pids: list[int]  # Playwright's driver, whose children are chromium's processes
    htmx_requests: list[str] = field(default_factory=list)  # URLs the page's htmx fetched

    def processes(self) -> list[psutil.Process]:
        """Chromium (browser, renderer, GPU and utility processes) and Playwright's driver."""
        return [proc for pid in self.driver_pids for proc in tree(pid)]

    def stay(self, seconds: float) -> None:
        """Leave the tab open; Playwright delivers the page's events meanwhile."""
        self.page.wait_for_timeout(seconds * 1000)

    def visibility(self) -> str:
        state: str = self.page.evaluate("document.visibilityState")
        return state


@contextmanager
def overview_tab(stack: Stack) -> Iterator[Tab]:
    if not CHROMIUM.exists():
        raise StackError(f"{CHROMIUM} is missing: apt-get install chromium")
    from playwright.sync_api import sync_playwright

    password = viewer_password(stack)
    before = {child.pid for child in psutil.Process().children()}
    with sync_playwright() as playwright:
        driver = [c.pid for c in psutil.Process().children() if c.pid not in before]
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1360, "height": 900})
            page.set_default_timeout(30_000)
            tab = Tab(page, driver)

            def seen(request: Request) -> None:
                if "hx-request" in request.headers:
                    tab.htmx_requests.append(request.url)

            page.on("request", seen)
            page.goto(f"{stack.web_url}/")
            page.get_by_label("Username").fill(USERNAME)
            page.get_by_label("Password").fill(password)
            page.get_by_role("button", name="Log in").click()
            page.get_by_role("heading", name="Overview").wait_for()
            yield tab
        finally:
            browser.close()
