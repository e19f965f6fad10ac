"""What the live fragments' poll tests share (opsboard.dashboard.polling): a fixture that
keeps the minute from turning, and a poll as htmx sends it."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from opsboard.dashboard import polling


@pytest.fixture
def one_poll_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """No minute turns during the test, so a token changes only with what the page shows
    (the live server of the browser tests runs in the test's process)."""
    monkeypatch.setattr(polling, "RENDER_EVERY", 10**9)


def poll_url(pattern: re.Pattern[str], page: str) -> str:
    """The URL, token included, that the fragment `pattern` finds in `page` polls."""
    found = pattern.search(page)
    assert found, "the fragment polls with the token of what it shows"
    return html.unescape(found.group(1))


def poll(client: Client, url: str) -> tuple[int, str]:
    """A poll as htmx sends it: the status and the body."""
    response = client.get(url, HTTP_HX_REQUEST="true")
    return response.status_code, response.content.decode()
