"""A key consumer's own bookkeeping for the time limits (opsboard.engine.consumer); its
runs end to end are in test_guarantees.py, with real workers."""

from __future__ import annotations

import logging

import pytest
from django.conf import settings
from django.db import OperationalError

from controllers.base import Key
from opsboard.engine import consumer, database

KEY = Key("toy", "ns", "a")


def test_a_long_reconcile_is_reported_past_the_soft_limit_and_overdue_past_the_hard(
    caplog: pytest.LogCaptureFixture,
) -> None:
    one = consumer.KeyConsumer(["opsboard:ready:nobody"])
    soft, hard = settings.CELERY_TASK_SOFT_TIME_LIMIT, settings.CELERY_TASK_TIME_LIMIT
    one.running = (KEY, 100.0)
    with caplog.at_level(logging.WARNING, logger="opsboard.engine.consumer"):
        assert not one.overdue(100.0 + soft - 1)
        assert "has run for" not in caplog.text
        assert not one.overdue(100.0 + soft)
        assert f"The reconcile of {KEY} has run for {soft} s" in caplog.text
        assert one.overdue(100.0 + hard)
    assert caplog.text.count("has run for") == 1  # reported once


def test_a_run_that_could_not_reach_the_database_is_not_left_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def down() -> None:
        raise OperationalError("connection refused")

    monkeypatch.setattr(database, "run_starts", down)
    one = consumer.KeyConsumer(["opsboard:ready:nobody"])
    with pytest.raises(OperationalError):
        one._run(KEY)
    assert one.running is None
    assert not one.overdue(1e12)  # nothing to end the process for
