from __future__ import annotations

import contextlib
from typing import Any

import pytest

from controllers.kube import ApiKube, Conflict, load_api_client
from tests.engine.toy import CRD, TOY
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
