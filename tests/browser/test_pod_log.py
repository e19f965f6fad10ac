"""A pod's log followed in a browser: the page reads it again while the tab is open (each
unchanged read answered 204 and kept) and says so once the pod is gone, with the real
Memcached operator running the pod."""

from __future__ import annotations

import pytest
from kubernetes import client
from playwright.sync_api import Response

from controllers.kube import ApiKube
from opsboard.mirror.models import KubeObject
from tests.browser.conftest import screenshot
from tests.diagnosis.memcached_run import create_memcached
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _ready_pod(namespace: str, cache: str) -> str:
    def found() -> str | None:
        for pod in KubeObject.objects.filter(kind="Pod", namespace=namespace):
            statuses = (pod.status or {}).get("containerStatuses") or []
            if pod.name.startswith(f"{cache}-") and statuses and statuses[0].get("ready"):
                return pod.name
        return None

    name: str = wait_for(found, what=f"a ready pod of {cache} in the mirror", timeout=90)
    return name


def _is_poll(response: Response) -> bool:
    return "/log/?" in response.url and "&shown=" in response.url


def test_a_followed_log_is_read_again_and_says_when_its_pod_is_gone(
    browser, running_engine, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, page_as, viewer, live_server,
) -> None:  # fmt: skip
    create_memcached(cluster_kube, namespace, "cache-l", size=1)
    pod = _ready_pod(namespace, "cache-l")
    page = page_as(viewer)
    page.goto(f"{live_server.url}/k/memcached/{namespace}/cache-l/pods/{pod}/log/")
    with page.expect_response(_is_poll) as first:
        page.get_by_role("link", name="follow", exact=True).click()
    assert first.value.status == 204  # the same log: the page is kept as it is
    assert page.get_by_role("link", name="stop following").is_visible()
    screenshot(page, "pod-log-followed")

    client.CoreV1Api(kube_api_client).delete_namespaced_pod(pod, namespace, grace_period_seconds=0)
    page.get_by_text(f"Pod {pod} is gone (deleted, or replaced in a rollout)").wait_for(
        timeout=60_000
    )
    assert not page.get_by_role("link", name="stop following").is_visible()
