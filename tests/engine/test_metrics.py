"""/metrics: controller-runtime's names and buckets, summed over every worker process."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from controllers.kube import ApiKube
from opsboard.engine.models import ReconcileRun
from tests.engine.toy import CONFIGMAP, TOY, toy
from tests.fixtures.celery import EngineProcesses
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def sample(text: str, metric: str, **labels: str) -> float:
    """The value of one sample, labels matched exactly as given (in any order)."""
    total = 0.0
    for line in text.splitlines():
        match = re.match(rf"^{metric}{{(.*)}} (\S+)$", line)
        if match and all(f'{k}="{v}"' in match.group(1) for k, v in labels.items()):
            total += float(match.group(2))
    return total


def test_metrics_count_every_run_of_every_worker_process(
    engine: EngineProcesses,
    toy_crd: None,
    api: ApiKube,
    namespace: str,
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
) -> None:
    settings.OPSBOARD_CONTROLLERS = ["tests.engine.toy"]
    engine.controllers = "tests.engine.toy"
    for worker in [engine.start_worker(wait=False) for _ in range(2)]:
        engine.wait_worker_ready(worker)
    engine.start_watcher()
    for i in range(8):
        api.create(TOY, toy(f"m{i}", namespace, sleep=0.05, touch=True))
    wait_for(
        lambda: (
            ReconcileRun.objects.filter(namespace=namespace).values("name").distinct().count() == 8
        ),
        what="every CR reconciled",
    )
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(engine.tmp / "metrics"))

    def scrape() -> str:
        response = Client().get("/metrics")
        assert response.status_code == 200
        return response.content.decode()

    def counted() -> bool:
        runs = sum(1 + r.folded_count for r in ReconcileRun.objects.filter(namespace=namespace))
        return sample(scrape(), "controller_runtime_reconcile_total", controller="toy") == runs

    def settled() -> bool:
        # Each Toy's ConfigMap event queues its key once more: wait for the queue to drain too.
        drained = sample(scrape(), "workqueue_depth", controller="toy", name="toy") == 0
        return drained and counted()

    wait_for(settled, what="an empty queue and the counter matching the recorded runs")
    text = scrape()
    assert len({r.worker for r in ReconcileRun.objects.filter(namespace=namespace)}) == 2
    assert 'controller_runtime_reconcile_time_seconds_bucket{controller="toy",le="0.005"}' in text
    assert 'le="60.0"' in text
    assert sample(text, "workqueue_queue_duration_seconds_count", controller="toy") >= 8
    assert sample(text, "workqueue_work_duration_seconds_count", controller="toy") >= 8
    assert (
        "controller_runtime_reconcile_errors_total" in text or "workqueue_retries_total" not in text
    )


def test_work_in_progress_gauges_show_a_running_reconcile_and_clear_after(
    engine: EngineProcesses,
    toy_crd: None,
    api: ApiKube,
    namespace: str,
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
) -> None:
    settings.OPSBOARD_CONTROLLERS = ["tests.engine.toy"]
    engine.controllers = "tests.engine.toy"
    engine.start_worker()
    engine.start_watcher()
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(engine.tmp / "metrics"))

    def gauges() -> tuple[float, float]:
        text = Client().get("/metrics").content.decode()
        labels = {"controller": "toy", "name": "toy"}
        return (
            sample(text, "workqueue_unfinished_work_seconds", **labels),
            sample(text, "workqueue_longest_running_processor_seconds", **labels),
        )

    assert gauges() == (0.0, 0.0)
    api.create(TOY, toy("slow", namespace, sleep=1.5))
    unfinished, longest = wait_for(
        lambda: (g := gauges())[1] > 0 and g, what="the running reconcile in the gauges"
    )
    assert unfinished >= longest > 0  # one key running: the sum is at least the longest
    wait_for(lambda: api.get(CONFIGMAP, namespace, "slow"), what="the reconcile to finish")
    wait_for(lambda: gauges() == (0.0, 0.0), timeout=30, what="the gauges back to zero")
    assert ReconcileRun.objects.filter(namespace=namespace, name="slow").exists()


def test_a_process_s_metrics_file_not_sized_yet_does_not_fail_the_scrape(
    engine: EngineProcesses, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """A starting process creates its file empty and sizes it a moment later."""
    settings.OPSBOARD_CONTROLLERS = ["tests.engine.toy"]
    files = engine.tmp / "metrics"
    files.mkdir(exist_ok=True)
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(files))
    (files / "counter_4242.db").touch()
    response = Client().get("/metrics")
    assert response.status_code == 200
    assert b"workqueue_depth" in response.content
