"""The stalled-consumer rule (opsboard.engine.stall), on its own clock."""

from __future__ import annotations

from opsboard.engine.stall import StallDetector


def test_tasks_waiting_while_idle_past_the_limit_is_a_stall() -> None:
    detector = StallDetector(limit=5.0, last_received=0.0)
    assert not detector.stalled(backlog=2, busy=False, now=10.0)  # the wait starts here
    assert not detector.stalled(backlog=2, busy=False, now=15.0)
    assert detector.stalled(backlog=2, busy=False, now=15.1)


def test_a_task_received_meanwhile_restarts_the_wait() -> None:
    detector = StallDetector(limit=5.0, last_received=0.0)
    detector.stalled(backlog=1, busy=False, now=10.0)
    detector.received(now=12.0)
    assert not detector.stalled(backlog=1, busy=False, now=16.0)  # waits from 16 now
    assert not detector.stalled(backlog=1, busy=False, now=21.0)
    assert detector.stalled(backlog=1, busy=False, now=21.5)


def test_a_busy_worker_or_an_empty_queue_is_never_stalled() -> None:
    detector = StallDetector(limit=5.0, last_received=0.0)
    detector.stalled(backlog=3, busy=False, now=10.0)
    assert not detector.stalled(backlog=3, busy=True, now=100.0)  # busy: others may wait
    assert not detector.stalled(backlog=3, busy=False, now=101.0)  # and the wait restarted
    assert not detector.stalled(backlog=0, busy=False, now=200.0)
    assert not detector.stalled(backlog=3, busy=False, now=203.0)
    assert detector.stalled(backlog=3, busy=False, now=208.5)
