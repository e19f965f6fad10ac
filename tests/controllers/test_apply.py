from __future__ import annotations

from datetime import UTC, datetime, timedelta

from controllers.apply import (
    RECHECK_MAX_SECONDS,
    RECHECK_MIN_SECONDS,
    TIME_FORMAT,
    recheck_after,
)


def _ago(seconds: float) -> str:
    return (datetime.now(UTC) - timedelta(seconds=seconds)).strftime(TIME_FORMAT)


def test_recheck_after_starts_soon_after_a_rollout_begins() -> None:
    assert recheck_after(_ago(0)) == RECHECK_MIN_SECONDS


def test_recheck_after_grows_with_the_age_of_the_rollout_up_to_a_bound() -> None:
    assert RECHECK_MIN_SECONDS < recheck_after(_ago(40)) < RECHECK_MAX_SECONDS
    assert recheck_after(_ago(3600)) == RECHECK_MAX_SECONDS


def test_recheck_after_an_unreadable_time_is_soon() -> None:
    assert recheck_after(None) == RECHECK_MIN_SECONDS
    assert recheck_after("yesterday") == RECHECK_MIN_SECONDS
