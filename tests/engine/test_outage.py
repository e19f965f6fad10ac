"""A failure repeated through an outage is logged with its traceback once, then in one line
each, and its end in one line."""

from __future__ import annotations

import logging

import pytest

from opsboard.engine.outage import Outage


def _error(text: str) -> Exception:
    try:
        raise ConnectionError(text)
    except ConnectionError as exc:
        return exc


def test_one_traceback_per_outage_then_one_line_per_failure_and_one_on_recovery(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = logging.getLogger("tests.outage")
    outage = Outage(log, "Could not record the heartbeat", recovered="Recorded it again")
    with caplog.at_level(logging.INFO, logger="tests.outage"):
        for _ in range(3):
            outage.failed(_error("the connection is lost\nmore detail"), then="retrying")
        outage.worked()
        outage.worked()  # no outage: nothing to say
        outage.failed(_error("refused"))  # a new outage: its traceback again
    records = caplog.records
    assert [r.exc_info is not None for r in records] == [True, False, False, False, True]
    assert records[0].getMessage() == "Could not record the heartbeat; retrying"
    assert records[1].getMessage() == (
        "Could not record the heartbeat (ConnectionError: the connection is lost; "
        "failure 2 in a row); retrying"
    )
    assert records[3].getMessage() == "Recorded it again, after 3 failure(s)"
    assert all("\n" not in r.getMessage() for r in records)
