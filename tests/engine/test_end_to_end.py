"""The engine end to end: kubesim → watcher → mirror → Redis → Celery worker → kubesim."""

from __future__ import annotations

import time
from typing import Any

import pytest

from controllers.base import Key, Kind
from controllers.kube import ApiKube
from opsboard.engine.enqueue import reconcile_enqueue
from opsboard.engine.models import ReconcileRun
from opsboard.engine.selectors import engine_health
from opsboard.mirror.models import KindWatch, KubeObject
from opsboard.mirror.selectors import mirror_freshness
from tests.engine.toy import CONFIGMAP, TOY, toy
from tests.fixtures.celery import EngineProcesses
from tests.support.waiting import consistently, settled, wait_for

pytestmark = pytest.mark.django_db(transaction=True)
NAMESPACE = Kind("", "v1", "Namespace", "namespaces", namespaced=False)


@pytest.fixture
def toy_engine(engine: EngineProcesses, toy_crd: None) -> EngineProcesses:
    engine.controllers = "tests.engine.toy"
    engine.start_worker(concurrency=2)
    engine.start_watcher()
    return engine


def runs(namespace: str, name: str) -> list[ReconcileRun]:
    return list(ReconcileRun.objects.filter(namespace=namespace, name=name).order_by("started_at"))


def test_a_new_cr_is_reconciled_and_its_runs_logged(
    toy_engine: EngineProcesses, api: ApiKube, namespace: str
) -> None:
    api.create(TOY, toy("a", namespace, size=3))
    cm = wait_for(lambda: api.get(CONFIGMAP, namespace, "a"), what="the ConfigMap")
    assert cm["data"] == {"size": "3"}
    # The ConfigMap's own event may queue a second, no-op run: the first is the CR's.
    run, *later = wait_for(lambda: runs(namespace, "a"), what="a reconcile run")
    assert run.trigger == "event" and run.outcome == "success"
    assert all(not r.actions for r in later)
    assert run.actions == ["Created ConfigMap a"]
    assert run.uid and run.generation == 1


def test_a_spec_change_is_reconciled_and_the_status_write_is_not(
    toy_engine: EngineProcesses, api: ApiKube, namespace: str
) -> None:
    api.create(TOY, toy("a", namespace, size=1))
    wait_for(lambda: (api.get(TOY, namespace, "a").get("status") or {}).get("size") == 1)
    api.patch(TOY, namespace, "a", {"spec": {"size": 5}})
    wait_for(lambda: api.get(CONFIGMAP, namespace, "a")["data"] == {"size": "5"})
    wait_for(lambda: api.get(TOY, namespace, "a")["status"]["size"] == 5, what="status")
    wait_for(
        lambda: KubeObject.objects.filter(kind="Toy", name="a", status__size=5).exists(),
        what="the mirror to see the status",
    )

    def count() -> int:
        # A retry follows a failed run (a 409 when the CR moved on during it, under load):
        # the failure's doing, not a status write's.
        found = [r for r in runs(namespace, "a") if r.trigger != ReconcileRun.Trigger.RETRY]
        return sum(1 + r.folded_count for r in found)

    def described() -> str:
        return repr([(r.trigger, r.trigger_detail, r.outcome, r.actions, r.error[:80])
                     for r in runs(namespace, "a")])  # fmt: skip

    # Two spec versions and two ConfigMap changes (its own writes, seen through the owner
    # mapping) explain at most four runs; the two status writes must add none.
    try:
        consistently(lambda: count() <= 4, for_s=1.0, what="at most four runs")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; runs: {described()}") from None
    done = runs(namespace, "a")
    assert [r.actions for r in done if r.actions] == [
        ["Created ConfigMap a"],
        ["Updated ConfigMap a size 1→5"],
    ], described()
    assert count() <= 4, described()


def test_a_deleted_child_is_restored_through_the_owner_mapping(
    toy_engine: EngineProcesses, api: ApiKube, namespace: str
) -> None:
    api.create(TOY, toy("a", namespace))
    wait_for(lambda: api.get(CONFIGMAP, namespace, "a"), what="the ConfigMap")
    api.delete(CONFIGMAP, namespace, "a")
    wait_for(
        lambda: len([r for r in runs(namespace, "a") if r.actions == ["Created ConfigMap a"]]) == 2,
        what="the ConfigMap to be created again",
    )
    assert api.get(CONFIGMAP, namespace, "a") is not None


@pytest.mark.kubesim_only
def test_no_key_runs_before_every_kind_is_listed(
    engine: EngineProcesses, api: ApiKube, namespace: str, toy_crd: None, kubesim_server: Any
) -> None:
    # The ConfigMaps' first list answers 2 s late. Were the Toy reconciled meanwhile, its
    # ConfigMap could be created and deleted before that list, which would show neither.
    kubesim_server.add_latency(2000, verb="list", resource="configmaps", count=1)
    api.create(TOY, toy("a", namespace))
    engine.controllers = "tests.engine.toy"
    engine.start_worker(concurrency=2)
    engine.start_watcher()
    first = wait_for(lambda: api.get(CONFIGMAP, namespace, "a"), what="the ConfigMap")
    api.delete(CONFIGMAP, namespace, "a")
    again = wait_for(
        lambda: (api.get(CONFIGMAP, namespace, "a") or {}).get("metadata", {}).get("uid"),
        timeout=30,
        what="the ConfigMap to be created again",
    )
    assert again != first["metadata"]["uid"]


@pytest.mark.kubesim_only
def test_a_noop_reconcile_makes_no_api_call(
    toy_engine: EngineProcesses, api: ApiKube, namespace: str, kubesim_server: Any
) -> None:
    api.create(TOY, toy("a", namespace))
    wait_for(lambda: (api.get(TOY, namespace, "a").get("status") or {}).get("size") == 1)
    wait_for(lambda: KubeObject.objects.filter(kind="Toy", name="a", status__size=1).exists())

    def count() -> int:
        return sum(1 + r.folded_count for r in runs(namespace, "a"))

    settled(count, for_s=0.5, what="the runs caused by its own writes")
    before, since = count(), time.time()
    reconcile_enqueue(key=Key("toy", namespace, "a"), trigger="manual")
    wait_for(lambda: count() == before + 1, what="the manual run")
    calls = [
        (r.method, r.path)
        for r in kubesim_server.request_log(since=since)
        if r.namespace == namespace and r.verb != "watch"
    ]
    assert calls == []
    # The log does see this namespace's calls: the first run's ConfigMap create is there.
    assert any(r.namespace == namespace for r in kubesim_server.request_log(verb="create"))
    assert runs(namespace, "a")[-1].actions == []


def test_engine_health_lists_live_workers(toy_engine: EngineProcesses, settings: Any) -> None:
    settings.OPSBOARD_CONTROLLERS = ["tests.engine.toy"]
    health = engine_health()
    assert health.reachable and len(health.workers) == 1 and health.depths == {"toy": 0}


def test_only_the_configured_namespaces_are_watched(
    engine: EngineProcesses, toy_crd: None, api: ApiKube, namespace: str
) -> None:
    other = f"{namespace}-other"
    api.create(NAMESPACE, {"metadata": {"name": other}})
    try:
        engine.controllers = "tests.engine.toy"
        engine.extra_env["OPSBOARD_WATCH_NAMESPACES"] = namespace
        engine.start_worker()
        engine.start_watcher()
        api.create(TOY, toy("ignored", other))
        api.create(TOY, toy("watched", namespace))
        wait_for(lambda: api.get(CONFIGMAP, namespace, "watched"), what="the watched CR")
        consistently(
            lambda: (
                api.get(CONFIGMAP, other, "ignored") is None
                and not KubeObject.objects.filter(namespace=other).exists()
            ),
            for_s=0.5,
            what="nothing done in the other namespace",
        )
        # The pages still say when the mirror last changed; the kind keeps no resume
        # point, so a later watcher of every namespace lists it afresh.
        wait_for(lambda: mirror_freshness().last_event_at, what="the last event's time saved")
        watch = KindWatch.objects.get(api_version=TOY.api_version, kind=TOY.kind)
        assert (watch.resource_version, watch.listed_at is not None) == ("", True)
    finally:
        api.delete(NAMESPACE, "", other)
