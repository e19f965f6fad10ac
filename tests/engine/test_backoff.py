"""The backoff of a failing key by the kind of its error, with a real Celery worker,
redis-server and kubesim: a temporary error's delay stops growing at
OPSBOARD_BACKOFF_TEMPORARY_MAX, a failing reconcile's goes on to OPSBOARD_BACKOFF_MAX."""

from __future__ import annotations

import pytest

from controllers.kube import ApiKube
from opsboard.engine.models import ReconcileRun
from tests.engine.toy import TOY, toy
from tests.fixtures.celery import EngineProcesses
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _delays(namespace: str, name: str) -> list[float | None]:
    runs = ReconcileRun.objects.filter(namespace=namespace, name=name, outcome="error")
    return [r.requeue_after for r in runs.order_by("started_at")[:6]]


@pytest.fixture
def toys(engine: EngineProcesses, toy_crd: None) -> EngineProcesses:
    engine.controllers = "tests.engine.toy"
    engine.extra_env.update(OPSBOARD_BACKOFF_BASE="0.05", OPSBOARD_BACKOFF_TEMPORARY_MAX="0.2")
    engine.start_worker()
    engine.start_watcher()
    return engine


def test_a_temporary_errors_retries_come_no_further_apart_than_its_cap(
    toys: EngineProcesses, api: ApiKube, namespace: str
) -> None:
    api.create(TOY, toy("a", namespace, fail="temporary"))
    wait_for(lambda: len(_delays(namespace, "a")) >= 6, what="six failed runs")
    assert _delays(namespace, "a") == [0.05, 0.1, 0.2, 0.2, 0.2, 0.2]


def test_a_crashing_reconcile_backs_off_past_the_temporary_cap(
    toys: EngineProcesses, api: ApiKube, namespace: str
) -> None:
    api.create(TOY, toy("a", namespace, fail="crash"))
    wait_for(lambda: len(_delays(namespace, "a")) >= 5, what="five failed runs")
    assert _delays(namespace, "a")[:5] == [0.05, 0.1, 0.2, 0.4, 0.8]
