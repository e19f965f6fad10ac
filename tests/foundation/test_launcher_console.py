"""`make run`'s console: each child's lines under its name, and no empty ones (a Celery
worker ends with a blank line, which printed as a bare "worker |")."""

from __future__ import annotations

import sys

import pytest

from opsboard.launcher import Child
from tests.support.waiting import wait_for


def test_a_childs_lines_are_prefixed_with_its_name_and_blank_ones_dropped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    child = Child("worker", [sys.executable, "-c", "print('one\\n\\n  \\ntwo')"])
    child.start({})
    assert child.process is not None
    child.process.wait(10)
    printed: list[str] = []

    def both_lines() -> bool:
        printed.extend(capsys.readouterr().out.splitlines())
        return any(line.endswith("| two") for line in printed)

    wait_for(both_lines, what="the child's lines on the console")
    assert [line.split("| ", 1)[1] for line in printed] == ["one", "two"]
    assert all("worker" in line.split("|")[0] for line in printed)
