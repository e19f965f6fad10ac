from __future__ import annotations

from controllers.ownership import controller_ref
from controllers.problems import ownership_problem
from tests.controllers.builders import memcached


def test_ownership_problem_is_none_for_a_missing_an_own_or_an_orphan_child() -> None:
    cr = memcached("m")
    assert ownership_problem(cr, None, kind="Deployment") is None
    own = {"metadata": {"name": "m", "ownerReferences": [controller_ref(cr)]}}
    assert ownership_problem(cr, own, kind="Deployment") is None
    assert ownership_problem(cr, {"metadata": {"name": "m"}}, kind="Deployment") is None


def test_ownership_problem_names_the_other_controller_of_a_child() -> None:
    other = {"kind": "WebServer", "name": "m", "uid": "other", "controller": True}
    child = {"metadata": {"name": "m", "ownerReferences": [other]}}
    reason, message = ownership_problem(memcached("m"), child, kind="Deployment") or ("", "")
    assert reason == "ChildConflict"
    assert "Deployment m exists and is controlled by WebServer m" in message
