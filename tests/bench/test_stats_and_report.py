"""The pure parts of bench/: percentiles, verdicts against targets, the table."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from bench import control_plane, controller_manager, flowschemas, trace
from bench.fleet import Fleet
from bench.report import Outcome, Row, Target, table, write_json
from bench.requestlog import from_counts, from_log
from bench.runner import expect
from bench.stack import StackError
from bench.stats import percentile, summary_ms
from controllers.ownership import INSTANCE_LABEL


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


def test_the_json_keeps_every_latency_sample_in_order(tmp_path):
    outcome = Outcome("patch", "Patch", samples={"opsboard: spec": [0.0081234, 0.05, 0.0079]})
    document = json.loads(write_json([outcome], tmp_path, quick=True).read_text())
    assert document["scenarios"]["patch"]["samples_ms"] == {"opsboard: spec": [8.12, 50.0, 7.9]}


def test_a_fleet_that_never_converges_fails_the_scenario_instead_of_measuring_it():
    fleet = Fleet(api=None, namespace="bench")  # type: ignore[arg-type]  # never started
    fleet.ready_ok.add("mc-00000")
    expect(fleet, lambda: len(fleet.ready_ok) >= 1, 1, "one CR ready")  # held: no error
    with pytest.raises(StackError, match=r"all 2 CRs ready: not reached within 0.05 s"):
        expect(fleet, lambda: len(fleet.ready_ok) >= 2, 0.05, "all 2 CRs ready")


def test_the_floor_is_ready_when_its_pods_are_not_when_its_deployments_status_says_so():
    """An operator's readiness is told from the pods; so is the floor's. The Deployment's
    own status comes later on a real cluster (its controller's client is rate limited)."""
    fleet = Fleet(api=None, namespace="bench", pods=True)  # type: ignore[arg-type]  # never started

    def pod(name: str, ready: str, **meta: str) -> dict[str, object]:
        labels = {INSTANCE_LABEL: "mc-1"}
        return {"metadata": {"name": name, "labels": labels, **meta},
                "status": {"conditions": [{"type": "Ready", "status": ready}]}}  # fmt: skip

    fleet._on_deployment("ADDED", {"metadata": {"name": "mc-1", "generation": 1},
                                   "spec": {"replicas": 2}})  # fmt: skip
    fleet._on_pod("ADDED", pod("a", "True"))
    fleet._on_pod("ADDED", pod("b", "False"))
    assert not fleet.deployment_ready("mc-1", 2)
    fleet._on_pod("MODIFIED", pod("b", "True"))
    fleet._on_pod("MODIFIED", pod("b", "True"))  # the same news twice counts once
    assert fleet.deployment_ready("mc-1", 2)
    assert not fleet.reported  # its status says nothing yet
    fleet._on_pod("MODIFIED", pod("a", "True", deletionTimestamp="2026-11-29T00:00:00Z"))
    assert not fleet.deployment_ready("mc-1", 2)
    fleet._on_pod("DELETED", pod("a", "True"))
    fleet._on_pod("ADDED", pod("c", "True"))
    assert fleet.deployment_ready("mc-1", 2)
    fleet._on_pod("ADDED", {"metadata": {"name": "other", "labels": {}}})  # not a Deployment's
    assert fleet.pods_ready == {"mc-1": 2}


def test_the_cluster_controllers_pace_from_the_servers_count_and_their_events():
    """apiserver_request_total by resource, every code (a conflict took a token too), and
    the Events each controller recorded: its requests per second."""

    def metrics(replicasets: int, conflicts: int) -> str:
        line = 'apiserver_request_total{{code="{}",resource="{}",subresource="{}",verb="{}"}} {}'
        return "\n".join([
            "# TYPE apiserver_request_total counter",
            line.format(201, "replicasets", "", "POST", replicasets),
            line.format(200, "deployments", "status", "PUT", replicasets),
            line.format(409, "deployments", "status", "PUT", conflicts),
            line.format(201, "pods", "", "POST", 2 * replicasets),
            line.format(200, "replicasets", "status", "PUT", replicasets),
            line.format(200, "pods", "", "LIST", 999),
            'apiserver_flowcontrol_dispatched_requests_total{flow_schema="exempt"} 5',
        ])  # fmt: skip

    before = control_plane.request_counts(metrics(replicasets=10, conflicts=0))
    assert before[("PUT", "deployments/status")] == 10
    after = control_plane.request_counts(metrics(replicasets=30, conflicts=20))
    events = Counter({"deployment-controller": 20, "replicaset-controller": 40, "kubelet": 9})
    assert control_plane.rates(after - before, events, seconds=4) == {
        "deployment controller": (20 + 40 + 20) / 4,
        "ReplicaSet controller": (40 + 20 + 40) / 4,
    }


def test_a_real_servers_count_of_the_operators_requests_by_kind():
    """apiserver_flowcontrol_dispatched_requests_total of the stack's own flow schemas,
    read twice: what the operator asked between, watches and Leases apart, another
    stack's schemas and every other flow (the control plane's) left out."""

    def metrics(writes: int, reads: int) -> str:
        ours, other = "bench-cost-opsboard-ab12", "bench-cost-kopf-cd34"
        return "\n".join([
            "# HELP apiserver_request_total Counter of apiserver requests.",
            'apiserver_request_total{code="200",resource="pods",verb="LIST"} 40',
            "# TYPE apiserver_flowcontrol_dispatched_requests_total counter",
            f'apiserver_flowcontrol_dispatched_requests_total{{flow_schema="{ours}-watches",'
            'priority_level="exempt"} 12',
            f'apiserver_flowcontrol_dispatched_requests_total{{flow_schema="{ours}-leases",'
            f'priority_level="exempt"}} {reads}',
            f'apiserver_flowcontrol_dispatched_requests_total{{flow_schema="{ours}-event-writes",'
            'priority_level="exempt"} 3',
            f'apiserver_flowcontrol_dispatched_requests_total{{flow_schema="{ours}-other-writes",'
            f'priority_level="exempt"}} {writes}',
            f'apiserver_flowcontrol_dispatched_requests_total{{flow_schema="{ours}-reads",'
            f'priority_level="exempt"}} {reads}',
            f'apiserver_flowcontrol_dispatched_requests_total{{flow_schema="{other}-reads",'
            f'priority_level="exempt"}} {writes}',
            'apiserver_flowcontrol_dispatched_requests_total{flow_schema="kube-scheduler",'
            f'priority_level="workload-high"}} {writes}',
        ])  # fmt: skip

    before = flowschemas.counts(metrics(writes=5, reads=10), "bench-cost-opsboard-ab12")
    assert before == {"watches": 12, "leases": 10, "event writes": 3, "other writes": 5,
                      "reads": 10}  # fmt: skip
    after = flowschemas.counts(metrics(writes=7, reads=11), "bench-cost-opsboard-ab12")
    asked = from_counts(after - before)
    assert (asked.requests, asked.writes, asked.event_writes, asked.leases) == (3, 2, 0, 1)
    assert asked.calls == {"other writes": 2, "reads": 1}


def test_kubesims_request_log_becomes_the_same_figures():
    asked = from_log([
        {"verb": "patch", "resource": "deployments"},
        {"verb": "patch", "resource": "memcacheds", "subresource": "status"},
        {"verb": "create", "resource": "events"},
        {"verb": "get", "resource": "memcacheds"},
        {"verb": "update", "resource": "leases"},
    ])  # fmt: skip
    assert (asked.requests, asked.writes, asked.event_writes, asked.leases) == (4, 3, 1, 1)
    assert asked.calls["patch memcacheds/status"] == 1


def test_the_operators_kubeconfig_signs_in_with_its_own_token_and_keeps_the_cluster():
    config = {
        "current-context": "rig",
        "contexts": [{"name": "rig", "context": {"cluster": "rig", "user": "rig-admin"}},
                     {"name": "other", "context": {"cluster": "rig", "user": "someone"}}],
        "clusters": [{"name": "rig", "cluster": {"server": "https://127.0.0.1:6443",
                                                 "insecure-skip-tls-verify": True}}],
        "users": [{"name": "rig-admin", "user": {"token": "admin-token"}},
                  {"name": "someone", "user": {"token": "theirs"}}],
    }  # fmt: skip
    signed = flowschemas.signed_in_as(config, "operator-token")
    assert signed["clusters"] == config["clusters"]
    users = {u["name"]: u["user"] for u in signed["users"]}
    assert users == {"rig-admin": {"token": "operator-token"}, "someone": {"token": "theirs"}}
    assert config["users"][0]["user"] == {"token": "admin-token"}  # the bench's, untouched


def test_the_controller_managers_queues_and_rate_limiter_waits():
    """Its queue depths, and the seconds its requests waited on their rate limiters per
    second: how many waited at once."""

    def metrics(deployments: int, waited: float, requests: int) -> str:
        return "\n".join([
            "# TYPE workqueue_depth gauge",
            f'workqueue_depth{{name="deployment"}} {deployments}',
            'workqueue_depth{name="replicaset"} 4',
            'workqueue_depth{name="garbage_collector_graph_changes"} 99',
            "# TYPE rest_client_rate_limiter_duration_seconds histogram",
            f'rest_client_rate_limiter_duration_seconds_sum{{verb="POST"}} {waited}',
            'rest_client_rate_limiter_duration_seconds_sum{verb="PUT"} 1',
            "# TYPE rest_client_requests_total counter",
            f'rest_client_requests_total{{code="201",method="POST"}} {requests}',
            'rest_client_requests_total{code="409",method="PUT"} 10',
        ])  # fmt: skip

    first = {"t": 0.0, **controller_manager.sample(metrics(990, waited=5, requests=100))}
    assert first == {"t": 0.0, "deployment": 990, "replicaset": 4, "waited": 6, "requests": 110}
    later = {"t": 10.0, **controller_manager.sample(metrics(980, waited=125, requests=500))}
    header, row = controller_manager.rows([first, later])
    assert "waiting" in header
    assert row.split() == ["10", "980", "4", "12.0", "40.0"]


def test_the_patch_trace_is_read_per_patch_from_the_watchers_read_of_its_generation(tmp_path):
    """One patch's marks among others': another key's run, the same generation's echo
    (the operator's own status write), the next run in the same process."""
    path = tmp_path / "trace.txt"
    key, deployment = (
        "memcached/bench/patched",
        "PATCH /apis/apps/v1/namespaces/bench/deployments/patched",
    )
    status = "PATCH /apis/cache.example.com/v1alpha1/namespaces/bench/memcacheds/patched/status"
    lines = [
        (99.9990, "7", "watched", "bench/patched 4"),
        (99.9995, "8", "run", "memcached/bench/other"),  # another key, another process
        (99.9996, "8", "send", "PATCH /apis/apps/v1/namespaces/bench/deployments/other"),
        (100.0010, "7", "queued", key),
        (100.0008, "9", "popped", key),  # before the watcher read Redis's answer
        (100.0012, "9", "run", key),
        (100.0020, "9", "send", status),
        (100.0021, "9", "sent", status),
        (100.0025, "9", "send", deployment),
        (100.0026, "9", "sent", deployment),
        (100.0040, "9", "answered", deployment),
        (100.0045, "9", "answered", status),
        (100.0046, "7", "watched", "bench/patched 4"),  # the status write's echo
        (100.0060, "9", "run", key),  # the next run: its writes are not this patch's
        (100.0061, "9", "send", deployment),
    ]
    path.write_text("".join(f"{at:.6f} {pid} {what} {detail}\n" for at, pid, what, detail in lines))
    trace.append(
        path, [(100.0000, "patched", "bench/patched 4"), (100.0050, "converged", "bench/patched 4")]
    )

    phases = trace.phases(trace.read(path), "bench", "patched")

    got = {label: figure["p50_ms"] for label, figure in phases.items()}
    assert got == pytest.approx(
        {
            "the watcher: the change mirrored, the key pushed, Redis's answer read": 2.0,
            "the watcher → a pool process holds the key (popped, its lock taken)": 1.8,
            "the run begun": 0.4,
            "the run: the mirror read, the status told, up to its send": 0.8,
            "the status request written to its socket": 0.1,
            "the status's send → the Deployment's send": 0.5,
            "the Deployment's PATCH, sent → answered": 1.5,
            "the status PATCH, sent → answered": 2.5,
            "the Deployment's send → the bench's watch shows both": 2.5,
            "in all: the bench's clock start → converged (its figure)": 5.0,
        },
        abs=0.002,
    )
    assert set(got) == {label for label, _, _ in trace.PHASES}
