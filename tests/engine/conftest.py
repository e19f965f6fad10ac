from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

import pytest

from controllers.kube import ApiKube, Conflict, load_api_client
from tests.engine.toy import CRD, TOY

CRD_KIND_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@pytest.fixture
def api(kubesim_server: Any) -> ApiKube:
    return ApiKube(load_api_client(kubeconfig=str(kubesim_server.kubeconfig_path)))


@pytest.fixture
def toy_crd(api: ApiKube) -> None:
    """The Toy CRD, created once per server and served before the test starts."""
    with contextlib.suppress(Conflict):
        api.request("POST", CRD_KIND_PATH, body=CRD)
    wait_for(lambda: api.list(TOY, "default") is not None, what="the Toy CRD to be served")


def wait_for(condition: Callable[[], Any], *, timeout: float = 20.0, what: str = "") -> Any:
    """Polls `condition` until it returns something truthy; fails after `timeout` s."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = condition()
            if value:
                return value
        except Exception as exc:  # not served yet, say: try again
            last_error = exc
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what or condition}: {last_error}")
