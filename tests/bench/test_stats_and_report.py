"""The pure parts of bench/: percentiles, verdicts against targets, the table."""

from __future__ import annotations

import pytest

from bench.fleet import Fleet
from bench.report import Outcome, Row, Target, table
from bench.requestlog import served_between, served_counts
from bench.runner import expect
from bench.stack import StackError
from bench.stats import percentile, summary_ms


def test_percentile_interpolates_between_closest_ranks():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5, 1, 3], 0) == 1
    assert percentile([5, 1, 3], 100) == 5


def test_percentile_of_nothing_is_an_error():
    with pytest.raises(ValueError):
        percentile([], 50)


def test_summary_is_in_milliseconds_and_empty_without_samples():
    assert summary_ms([0.010, 0.020, 0.030])["p50_ms"] == 20.0
    assert summary_ms([]) == {"n": 0}


def test_a_missed_target_says_by_how_much():
    assert Target(50).verdict(40, "ms") == "met"
    assert Target(50).verdict(60, "ms") == "MISSED by 10 ms (20%)"
    assert Target(5, ">=").verdict(2, "x") == "MISSED by 3 (60%)"
    assert Target(0).verdict(1, "n") == "MISSED by 1"
    assert Target(50).verdict(None) == "not measured"


def test_ratio_says_how_many_times_better_opsboard_is():
    assert Row("p50", 10, "ms", peer=50).ratio == 5
    assert Row("rate", 20, "1/s", peer=10, higher_is_better=True).ratio == 2
    assert Row("p50", 10, "ms").ratio is None


def test_table_prints_cpu_count_verdicts_and_errors():
    outcomes = [
        Outcome("patch", "Patch", rows=[Row("p50", 60, "ms", peer=30, target=Target(50))]),
        Outcome("ui", "UI", error="the dashboard is missing"),
    ]
    printed = table(outcomes, quick=True)
    assert "CPUs" in printed.splitlines()[0]
    assert "MISSED by 10 ms (20%)" in printed
    assert "0.5x" in printed
    assert "not measured: the dashboard is missing" in printed


def test_a_fleet_that_never_converges_fails_the_scenario_instead_of_measuring_it():
    fleet = Fleet(api=None, namespace="bench")  # type: ignore[arg-type]  # never started
    fleet.ready_ok.add("mc-00000")
    expect(fleet, lambda: len(fleet.ready_ok) >= 1, 1, "one CR ready")  # held: no error
    with pytest.raises(StackError, match=r"all 2 CRs ready: not reached within 0.05 s"):
        expect(fleet, lambda: len(fleet.ready_ok) >= 2, 0.05, "all 2 CRs ready")


def test_a_real_servers_count_of_requests_becomes_the_request_logs_records():
    """apiserver_request_total, read twice: what was served between, watches and the
    control plane's own asking (its Leases, the nodes, the storage lists) left out."""

    def metrics(patches: int, lists: int) -> str:
        return "\n".join([
            "# TYPE apiserver_request_total counter",
            'apiserver_request_total{code="200",group="apps",resource="deployments",'
            f'subresource="",verb="PATCH",version="v1"}} {patches}',
            'apiserver_request_total{code="409",group="apps",resource="deployments",'
            'subresource="",verb="PATCH",version="v1"} 1',
            'apiserver_request_total{code="201",group="",resource="events",subresource="",'
            'verb="POST",version="v1"} 3',
            'apiserver_request_total{code="200",group="",resource="pods",subresource="",'
            f'verb="WATCH",version="v1"}} {lists}',
            'apiserver_request_total{code="200",group="coordination.k8s.io",resource="leases",'
            f'subresource="",verb="PUT",version="v1"}} {lists}',
            'apiserver_request_total{code="200",group="",resource="persistentvolumeclaims",'
            f'subresource="",verb="LIST",version="v1"}} {lists}',
            'apiserver_request_longrunning_count{resource="pods",verb="WATCH"} 9',
        ])  # fmt: skip

    before = served_counts(metrics(patches=5, lists=10))
    assert before[("patch", "deployments", "")] == 6  # both codes
    assert before[("create", "events", "")] == 3
    assert served_between(before, served_counts(metrics(patches=5, lists=70))) == []
    after = served_counts(metrics(patches=7, lists=70))
    assert (
        served_between(before, after)
        == [{"verb": "patch", "resource": "deployments", "subresource": ""}] * 2
    )
