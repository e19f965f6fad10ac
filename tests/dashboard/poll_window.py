"""A fixture for the live fragments' poll tests (opsboard.dashboard.polling)."""

from __future__ import annotations

import pytest

from opsboard.dashboard import polling


@pytest.fixture
def one_poll_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """No minute turns during the test, so a token changes only with what the page shows
    (the live server of the browser tests runs in the test's process)."""
    monkeypatch.setattr(polling, "RENDER_EVERY", 10**9)
