from __future__ import annotations

from controllers.conditions import set_condition


def test_set_condition_adds_a_missing_condition_with_the_current_time() -> None:
    conditions = set_condition(
        [], type_="Available", status=True, reason="R", message="m", observed_generation=3, now="T1"
    )
    assert conditions == [
        {
            "type": "Available",
            "status": "True",
            "reason": "R",
            "message": "m",
            "observedGeneration": 3,
            "lastTransitionTime": "T1",
        }
    ]


def test_set_condition_keeps_the_transition_time_when_status_is_unchanged() -> None:
    first = set_condition(
        [],
        type_="Available",
        status=False,
        reason="A",
        message="1/3",
        observed_generation=1,
        now="T1",
    )
    second = set_condition(
        first,
        type_="Available",
        status=False,
        reason="B",
        message="2/3",
        observed_generation=2,
        now="T2",
    )
    assert second[0]["lastTransitionTime"] == "T1"
    assert (second[0]["reason"], second[0]["message"], second[0]["observedGeneration"]) == (
        "B",
        "2/3",
        2,
    )


def test_set_condition_moves_the_transition_time_when_status_flips_and_keeps_others() -> None:
    other = {"type": "Degraded", "status": "False", "lastTransitionTime": "T0"}
    first = set_condition(
        [other],
        type_="Available",
        status=False,
        reason="A",
        message="",
        observed_generation=1,
        now="T1",
    )
    flipped = set_condition(
        first,
        type_="Available",
        status=True,
        reason="A",
        message="",
        observed_generation=1,
        now="T2",
    )
    assert [c["type"] for c in flipped] == ["Degraded", "Available"]
    assert flipped[1]["lastTransitionTime"] == "T2"
    assert flipped[0] is other
