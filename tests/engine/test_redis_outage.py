"""A change the watcher could not queue because Redis was down is queued by the watcher
itself once Redis answers again: it does not wait for the periodic resync (no beat runs
here, so none can come)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controllers.kube import ApiKube
from opsboard.embedded.redis import EmbeddedRedis
from opsboard.engine.models import ReconcileRun
from opsboard.mirror.models import KubeObject
from tests.engine.toy import CONFIGMAP, TOY, toy
from tests.fixtures.celery import engine_processes
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_change_made_while_redis_is_down_is_reconciled_once_it_is_back_without_a_resync(
    transactional_db: Any,
    kubesim_server: Any,
    toy_crd: None,
    api: ApiKube,
    namespace: str,
    tmp_path: Path,
) -> None:
    server = EmbeddedRedis(tmp_path / "redis").start()
    engine = engine_processes(
        server.url, kubesim_server=kubesim_server, tmp=tmp_path, namespace=namespace
    )
    engine.controllers = "tests.engine.toy"

    def size() -> str | None:
        engine.restart_exited_workers()  # as a supervisor would
        return ((api.get(CONFIGMAP, namespace, "a") or {}).get("data") or {}).get("size")

    def watcher_log() -> str:
        return "".join(p.read_text() for p in tmp_path.glob("*-watcher.log"))

    try:
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
    finally:
        engine.stop_all()
        server.stop()
    triggers = ReconcileRun.objects.filter(namespace=namespace, name="a").values_list(
        "trigger", flat=True
    )
    assert "resync" not in triggers
