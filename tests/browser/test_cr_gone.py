"""A CR deleted through the Kubernetes API while a person has its page open, a change under
review: once the watcher has seen it go, the page says it was deleted, offers no action and
stops polling."""

from __future__ import annotations

import pytest

from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from opsboard.mirror.models import KubeObject
from tests.browser.conftest import screenshot
from tests.dashboard.mirror_factory import MEMCACHED_API
from tests.support.waiting import consistently, wait_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
# The live sections' polls the page has sent (Resource Timing records every fetch).
LIVE_POLLS = (
    "performance.getEntriesByType('resource').filter(e => e.name.includes('/live/')).length"
)


def test_a_page_open_on_a_deleted_cr_says_so_disables_its_actions_and_stops_polling(
    browser, running_engine, cluster_kube: ApiKube, namespace: str, page_as, operator,
    live_server,
) -> None:  # fmt: skip
    cluster_kube.create(MEMCACHED, {
        "apiVersion": MEMCACHED_API, "kind": "Memcached",
        "metadata": {"name": "cache-a", "namespace": namespace}, "spec": {"size": 1},
    })  # fmt: skip
    mirrored = KubeObject.objects.filter(kind="Memcached", namespace=namespace, name="cache-a")
    wait_for(mirrored.exists, what="the CR in the mirror")

    page = page_as(operator)
    page.goto(f"{live_server.url}/k/memcached/{namespace}/cache-a/")
    page.get_by_label("Size (replicas)").fill("2")
    page.get_by_role("button", name="Review change").click()
    page.get_by_role("button", name="Apply").wait_for()
    wait_for(lambda: page.evaluate(LIVE_POLLS) >= 2, what="the live sections polling")

    cluster_kube.delete(MEMCACHED, namespace, "cache-a")
    notice = page.get_by_role("status").filter(
        has_text=f"Memcached {namespace}/cache-a was deleted"
    )
    notice.wait_for()
    assert page.get_by_role("button", name="Apply").count() == 0
    assert page.get_by_role("button", name="Review change").is_disabled()
    assert page.get_by_role("button", name="Reconcile now").is_disabled()
    assert page.locator("#diagnosis").count() == 0, "no health claimed for what is gone"
    page.get_by_role("link", name="Back to the Memcached list").wait_for()
    screenshot(page, "cr-deleted")

    polls = page.evaluate(LIVE_POLLS)
    consistently(lambda: page.evaluate(LIVE_POLLS) == polls, for_s=5.0, what="no more polls")
