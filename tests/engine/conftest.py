from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import override_settings

from controllers.kube import ApiKube, Conflict, load_api_client
from opsboard.engine.kubeclient import api_kube
from tests.engine.toy import CRD, TOY
from tests.fixtures.celery import EngineProcesses
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
