"""What a run posts: one Event summing up what it changed, none for its status writes."""

from __future__ import annotations

from opsboard.engine.reporter import RunReporter


def test_a_run_that_changed_one_thing_posts_that_as_its_event() -> None:
    report = RunReporter()
    report.action("Scaled Deployment m replicas 3→5")
    report.status_change("Updated status: observedGeneration 2")
    assert report.actions == [
        "Scaled Deployment m replicas 3→5",
        "Updated status: observedGeneration 2",
    ]
    assert report.events == [("Normal", "Scaled", "Scaled Deployment m replicas 3→5")]


def test_several_changes_share_one_event_named_for_their_verb_or_reconciled() -> None:
    report = RunReporter()
    report.action("Created Deployment w")
    report.action("Created Service w")
    assert report.events == [("Normal", "Created", "Created Deployment w; Created Service w")]
    report.action("Scaled Deployment w replicas 1→2")
    assert report.events == [
        (
            "Normal",
            "Reconciled",
            "Created Deployment w; Created Service w; Scaled Deployment w replicas 1→2",
        )
    ]


def test_status_writes_alone_post_nothing_and_warnings_are_posted_as_told() -> None:
    report = RunReporter()
    report.status_change("Updated status.nodes: 2 pods")
    assert report.events == []
    report.event("Warning", "ImagePullFailed", "no such image")
    assert report.events == [("Warning", "ImagePullFailed", "no such image")]
