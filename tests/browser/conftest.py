"""Headless Debian chromium driven by Playwright against pytest-django's live server.

Skips when /usr/bin/chromium is missing outside CI; under CI=true a missing browser fails.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.servers.basehttp import ThreadedWSGIServer
from django.test.testcases import LiveServerThread, QuietWSGIRequestHandler

from tests.accounts.users import PASSWORD
from tests.dashboard.cluster_fixtures import cluster_kube, dashboard_crds, impersonation_rbac
from tests.dashboard.polls import one_poll_window

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
]  # fmt: skip
# fixtures shared with tests/dashboard
__all__ = ["cluster_kube", "dashboard_crds", "impersonation_rbac", "one_poll_window"]

SCREENSHOTS = Path(__file__).resolve().parents[1] / "screenshots"


@pytest.fixture(scope="package")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but /usr/bin/chromium is missing: apt-get install chromium")
        pytest.skip("/usr/bin/chromium is missing: apt-get install chromium to run these")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the ORM calls the tests make
    # between page actions are still synchronous and safe. Only for these tests: the flag
    # must not leak into the processes other tests start.
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page_as(browser, live_server):
    """`page_as(user)`: a fresh browser page logged in through the login form (`width=`: of
    another viewport than the usual 1360 px)."""
    contexts = []

    def login(user: User, *, width: int = 1360):
        context = browser.new_context(viewport={"width": width, "height": 900})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        log_in(page, live_server.url, user)
        return page

    yield login
    for context in contexts:
        context.close()


def log_in(page, base_url: str, user: User) -> None:
    """Through the login form, as a person does; ends on the overview."""
    page.goto(f"{base_url}/")
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("heading", name="Overview").wait_for()


def screenshot(page, name: str, *, full_page: bool = True) -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


class StoppableServer:
    """A live server of its own, on a port it keeps, that a test stops and starts again (as
    opsboard is stopped and restarted under an open page). pytest-django's is shared."""

    def __init__(self, host: str) -> None:
        self.host, self.port = host, 0
        self.thread: _ServerThread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> None:
        self.thread = _ServerThread(self.host, static_handler=StaticFilesHandler, port=self.port)
        self.thread.daemon = True
        self.thread.start()
        self.thread.is_ready.wait()
        if self.thread.error:
            raise self.thread.error
        self.port = self.thread.port

    def stop(self) -> None:
        if self.thread is not None:
            self.thread.terminate()
            self.thread.httpd.close_connections()
            self.thread = None


class _Server(ThreadedWSGIServer):
    """Closes its open connections when told, as a process that exits does: a stopped
    LiveServerThread stops accepting but goes on answering on a browser's kept-alive one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.connections: set[socket.socket] = set()

    def process_request(self, request: Any, client_address: Any) -> None:
        self.connections.add(request)
        super().process_request(request, client_address)

    def close_connections(self) -> None:
        for connection in self.connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


class _ServerThread(LiveServerThread):
    httpd: _Server

    def _create_server(self, connections_override: Any = None) -> _Server:
        # Its port again at once, as a restarted opsboard binds it (past TIME_WAIT).
        return _Server(
            (self.host, self.port), QuietWSGIRequestHandler, allow_reuse_address=True,
            connections_override=connections_override,
        )  # fmt: skip


@pytest.fixture
def stoppable_server(live_server) -> Iterator[StoppableServer]:
    """Needs the database as the live server has it (`django_db(transaction=True)`)."""
    server = StoppableServer(live_server.thread.host)
    server.start()
    yield server
    server.stop()
