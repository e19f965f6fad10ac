"""A change the watcher could not queue because Redis was down is queued by the watcher
itself once Redis answers again: it does not wait for the periodic resync (no beat runs
here, so none can come)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controllers.kube import ApiKube
from opsboard.embedded.redis import EmbeddedRedis
from opsboard.engine.models import ReconcileRun
from opsboard.mirror.models import KubeObject
from tests.engine.toy import TOY, child_size, toy
from tests.fixtures.celery import EngineProcesses
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_change_made_while_redis_is_down_is_reconciled_once_it_is_back_without_a_resync(
    toys_on_own_redis: tuple[EngineProcesses, EmbeddedRedis],
    api: ApiKube,
    namespace: str,
    tmp_path: Path,
) -> None:
    engine, server = toys_on_own_redis

    def size() -> str | None:
        engine.restart_exited_workers()  # as a supervisor would
        return child_size(api, namespace, "a")

    def watcher_log() -> str:
        return "".join(p.read_text() for p in tmp_path.glob("*-watcher.log"))

    engine.start_worker()
    engine.start_watcher()
    api.create(TOY, toy("a", namespace, size=1))
    wait_for(lambda: size() == "1", what="the first reconcile")
    server.stop()
    api.patch(TOY, namespace, "a", {"spec": {"size": 2}})
    mirrored = KubeObject.objects.filter(kind=TOY.kind, namespace=namespace, name="a")
    wait_for(lambda: mirrored.get().spec.get("size") == 2, what="the change mirrored")
    wait_for(lambda: "Could not queue" in watcher_log(), what="the watcher to fail to queue")
    server.start()
    wait_for(lambda: size() == "2", what="the change reconciled")
    triggers = ReconcileRun.objects.filter(namespace=namespace, name="a").values_list(
        "trigger", flat=True
    )
    assert "resync" not in triggers
