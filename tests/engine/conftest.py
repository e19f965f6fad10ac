from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from controllers.kube import ApiKube, Conflict, load_api_client
from opsboard.embedded.redis import EmbeddedRedis
from opsboard.engine.kubeclient import api_kube
from tests.engine.toy import CRD, TOY
from tests.fixtures.celery import EngineProcesses, engine_processes
from tests.support.waiting import wait_for

CRD_KIND_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@pytest.fixture
def api(kubesim_server: Any) -> ApiKube:
    return ApiKube(load_api_client(kubeconfig=str(kubesim_server.kubeconfig_path)))


@pytest.fixture
def toy_crd(api: ApiKube) -> None:
    """The Toy CRD, created once per server and served before the test starts."""
    with contextlib.suppress(Conflict):
        api.request("POST", CRD_KIND_PATH, body=CRD)
    wait_for(
        lambda: api.list(TOY, "default") is not None,
        what="the Toy CRD to be served",
        ignoring=(Exception,),  # not served yet
    )


@pytest.fixture
def in_process(engine: EngineProcesses, kubesim_server: Any, toy_crd: None) -> Iterator[None]:
    """This process runs the toy controller against the suite's cluster and Redis."""
    kubeconfig = str(kubesim_server.kubeconfig_path)
    with override_settings(OPSBOARD_CONTROLLERS=["tests.engine.toy"], KUBECONFIG=kubeconfig):
        api_kube.cache_clear()
        yield
    api_kube.cache_clear()


@pytest.fixture
def toys_on_own_redis(
    transactional_db: Any, kubesim_server: Any, toy_crd: None, namespace: str, tmp_path: Path
) -> Iterator[tuple[EngineProcesses, EmbeddedRedis]]:
    """The toy operator's engine on a Redis of its own, which the test may stop and start;
    no process is started yet."""
    server = EmbeddedRedis(tmp_path / "redis").start()
    engine = engine_processes(
        server.url, kubesim_server=kubesim_server, tmp=tmp_path, namespace=namespace
    )
    engine.controllers = "tests.engine.toy"
    try:
        yield engine, server
    finally:
        engine.stop_all()
        server.stop()
