"""`make test` runs pytest with `--dist loadgroup`: tests that share one expensive run or one
real cluster carry an `xdist_group` mark and must reach one worker together. pytest 9.2 with
xdist 3.8 silently dropped the grouping (the bench smoke run then ran on both workers)."""

from __future__ import annotations

import pytest


@pytest.mark.xdist_group("grouping-probe")
def test_a_grouped_test_is_scheduled_as_part_of_its_group(request: pytest.FixtureRequest) -> None:
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not run by an xdist worker under --dist loadgroup (make test runs so)")
    # The scheduler groups by this suffix; without it each test is scheduled on its own.
    assert request.node.nodeid.endswith("@grouping-probe"), request.node.nodeid
