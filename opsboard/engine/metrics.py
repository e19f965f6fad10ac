"""Prometheus metrics under controller-runtime's names, buckets and labels.

Worker processes write their samples to PROMETHEUS_MULTIPROC_DIR (set in settings before
prometheus_client is imported); /metrics sums them. The queue's gauges (depth, work in
progress) are read from Redis when scraped, since the queue lives there and not in any
one process.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from django.conf import settings
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector

Path(settings.PROMETHEUS_MULTIPROC_DIR).mkdir(parents=True, exist_ok=True)

# controller-runtime's pkg/internal/controller/metrics buckets.
RECONCILE_BUCKETS = (
    *(0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7),
    *(0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10),
    *(15, 20, 25, 30, 40, 50, 60),
)
# workqueue: prometheus.ExponentialBuckets(10e-9, 10, 12).
QUEUE_BUCKETS = tuple(1e-8 * 10**i for i in range(12))

RECONCILE_TOTAL = Counter(
    "controller_runtime_reconcile_total",
    "Total number of reconciliations per controller",
    ["controller", "result"],
)
RECONCILE_ERRORS = Counter(
    "controller_runtime_reconcile_errors_total",
    "Total number of reconciliation errors per controller",
    ["controller"],
)
RECONCILE_TIME = Histogram(
    "controller_runtime_reconcile_time_seconds",
    "Length of time per reconciliation per controller",
    ["controller"],
    buckets=RECONCILE_BUCKETS,
)
QUEUE_ADDS = Counter(
    "workqueue_adds_total", "Total number of adds handled by workqueue", ["controller", "name"]
)
QUEUE_DURATION = Histogram(
    "workqueue_queue_duration_seconds",
    "How long in seconds an item stays in workqueue before being requested",
    ["controller", "name"],
    buckets=QUEUE_BUCKETS,
)
WORK_DURATION = Histogram(
    "workqueue_work_duration_seconds",
    "How long in seconds processing an item from workqueue takes",
    ["controller", "name"],
    buckets=QUEUE_BUCKETS,
)
RETRIES = Counter(
    "workqueue_retries_total",
    "Total number of retries handled by workqueue",
    ["controller", "name"],
)


def queue_added(controller: str) -> None:
    QUEUE_ADDS.labels(controller, controller).inc()


def reconciled(controller: str, *, result: str, seconds: float, waited: float) -> None:
    """One finished run; result is success, requeue_after, error (as controller-runtime)."""
    RECONCILE_TOTAL.labels(controller, result).inc()
    if result == "error":
        RECONCILE_ERRORS.labels(controller).inc()
    RECONCILE_TIME.labels(controller).observe(seconds)
    WORK_DURATION.labels(controller, controller).observe(seconds)
    QUEUE_DURATION.labels(controller, controller).observe(max(waited, 0.0))


def retried(controller: str) -> None:
    RETRIES.labels(controller, controller).inc()


class _QueueGauges:
    """workqueue_depth and the work-in-progress gauges, read from Redis at scrape time."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from opsboard.engine.queue import queue_for
        from opsboard.engine.registered import controllers

        labels = ["controller", "name"]
        depth = GaugeMetricFamily("workqueue_depth", "Current depth of workqueue", labels=labels)
        unfinished = GaugeMetricFamily(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been "
            "observed by work_duration. Large values indicate stuck threads. One can deduce "
            "the number of stuck threads by observing the rate at which this increases.",
            labels=labels,
        )
        longest = GaugeMetricFamily(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            labels=labels,
        )
        for name in controllers():
            queue = queue_for(name)
            running = queue.running_seconds()
            depth.add_metric([name, name], queue.depth())
            unfinished.add_metric([name, name], sum(running))
            longest.add_metric([name, name], max(running, default=0.0))
        yield from (depth, unfinished, longest)


class _ProcessFiles(MultiProcessCollector):
    """prometheus_client's collector of every process's file, minus the empty ones: a
    process starting (a new pool process) creates its file and sizes it a moment later,
    and read in that moment it failed the whole scrape (500)."""

    def collect(self) -> Iterator[Metric]:
        files = [str(f) for f in Path(self._path).glob("*.db") if f.stat().st_size > 0]
        return iter(self.merge(files, accumulate=True))  # type: ignore[no-untyped-call]


def exposition() -> bytes:
    registry = CollectorRegistry()
    _ProcessFiles(registry)  # type: ignore[no-untyped-call]
    registry.register(_QueueGauges())
    return generate_latest(registry)
