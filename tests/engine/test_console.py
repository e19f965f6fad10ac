"""The console line of a reconcile: what it did, in one line a person can read."""

from __future__ import annotations

from controllers.base import Key
from opsboard.engine.console import reconcile_line
from opsboard.engine.outcome import Outcome, RunOutcome

KEY = Key("memcached", "default", "web")


def test_a_scale_reads_as_what_changed_and_how_long_it_took() -> None:
    actions = [
        "Scaled Deployment web replicas 3→5",
        "Updated status.nodes: 5 pods",
    ]
    line = reconcile_line(KEY, "event", RunOutcome(Outcome.SUCCESS), actions, 0.0412)
    assert line == "memcached default/web  event → Success  scaled 3→5, status.nodes 5 pods  41 ms"


def test_a_run_that_changed_nothing_prints_nothing() -> None:
    assert reconcile_line(KEY, "resync", RunOutcome(Outcome.SUCCESS), [], 0.002) is None


def test_a_run_that_only_updated_status_fields_prints_nothing() -> None:
    """Of a status update only the conditions turned True are told: with none, the line
    would tell nothing ("webserver default/web  event → Success    2 ms")."""
    actions = ["Updated status: readyReplicas 1, observedGeneration 2"]
    assert reconcile_line(KEY, "event", RunOutcome(Outcome.SUCCESS), actions, 0.002) is None


def test_an_error_is_printed_in_full_with_its_retry() -> None:
    error = "ApiException: (403)\nReason: Forbidden\ndeployments.apps is forbidden"
    outcome = RunOutcome(Outcome.ERROR, error=error, requeue_after=0.4)
    line = reconcile_line(KEY, "retry", outcome, [], 0.01)
    assert line is not None
    assert line.startswith("memcached default/web  retry → Error (again in 0.4 s)  ApiException")
    assert error in line


def test_a_permanent_error_is_worded_as_the_pages_word_it() -> None:
    outcome = RunOutcome(Outcome.PERMANENT, error="spec.size: Invalid value: -1")
    line = reconcile_line(KEY, "event", outcome, [], 0.003)
    assert line == (
        "memcached default/web  event → Permanent error  spec.size: Invalid value: -1  3 ms"
    )


def test_of_a_status_update_only_the_conditions_turned_true_are_told() -> None:
    actions = [
        "Created Deployment web",
        "Updated status.nodes: 0 pods",
        "Updated status: readyReplicas 0, selector a=b,c=d, observedGeneration 1, "
        "Available=False (PodsNotReady), Progressing=True (ScalingUp), Degraded=False (AsExpected)",
        "Updated status: claims [{'name': 'x'}], observedGeneration 2",
    ]
    line = reconcile_line(KEY, "event", RunOutcome(Outcome.SUCCESS), actions, 0.2)
    assert line == (
        "memcached default/web  event → Success  "
        "Created Deployment web, status.nodes 0 pods, Progressing=True (ScalingUp)  200 ms"
    )


def test_other_actions_are_kept_as_written() -> None:
    line = reconcile_line(
        KEY, "manual", RunOutcome(Outcome.REQUEUE, requeue_after=2), ["Created Deployment web"], 1
    )
    assert (
        line
        == "memcached default/web  manual → Requeue (again in 2 s)  Created Deployment web  1000 ms"
    )
