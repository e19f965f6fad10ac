"""The whole product in a browser: kubesim with its simulated cluster, a real Celery worker
and watcher keeping the mirror, and the live web server. An operator scales a Memcached
from 3 to 5 and watches the new pods appear; an admin finds the audit entry. An operator
gives a Memcached's pods a memory limit, and they roll out with it."""

from __future__ import annotations

import re

import pytest

from controllers.base import POD
from controllers.kube import ApiKube
from opsboard.mirror.models import KubeObject
from tests.browser.conftest import screenshot
from tests.diagnosis.memcached_run import create_memcached
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _mirrored_nodes(namespace: str) -> int:
    cr = KubeObject.objects.filter(kind="Memcached", namespace=namespace, name="cache-a").first()
    return len((cr.status or {}).get("nodes") or []) if cr else 0


def test_operator_scales_3_to_5_and_watches_the_rollout(
    browser, running_engine, cluster_kube: ApiKube, namespace: str, page_as, operator,
    admin_user, live_server,
) -> None:  # fmt: skip
    create_memcached(cluster_kube, namespace, "cache-a", size=3)
    wait_for(
        lambda: _mirrored_nodes(namespace) == 3, timeout=60, what="3 pods in the mirrored status"
    )

    page = page_as(operator)
    page.get_by_role("link", name="All resources").click()
    page.get_by_label("Namespace").select_option(namespace)
    page.get_by_label("Name or label=value").fill("cache-a")
    # The list filters itself as one types and pushes the filter into the URL: a click
    # before that would race its navigation against the list's own refresh.
    page.wait_for_url(re.compile("search=cache-a"))
    page.locator("#cr-rows tr", has_text=namespace).first.wait_for()
    page.locator("#cr-rows tr", has_text=namespace).get_by_role("link", name="cache-a").click()
    nodes = page.locator("[id^=cr-nodes-] tbody tr")
    tree_pods = page.locator("[id^=cr-tree-] tr.node", has_text="Pod")
    page.get_by_role("heading", name="Owner tree").wait_for()
    assert nodes.count() == 3

    page.get_by_label("Size (replicas)").fill("5")
    page.get_by_role("button", name="Review change").click()
    diff = page.locator("[id^=cr-diff-]")
    diff.wait_for()
    assert "spec.size" in diff.inner_text()
    screenshot(page, "review")
    page.get_by_role("button", name="Apply").click()
    page.get_by_text("Applied:").wait_for()

    # The live section polls every 2 s: no reload, the new pods simply appear.
    wait_for(lambda: nodes.count() == 5, what="5 pods in status.nodes on the page")
    wait_for(
        lambda: tree_pods.count() >= 5, timeout=60, what="5 pods in the owner tree on the page"
    )
    page.get_by_text("5 of 5").wait_for(timeout=60_000)
    screenshot(page, "rollout-5-pods")
    screenshot(page, "readme", full_page=False)  # docs/screenshot.png is a copy of this one

    admin = page_as(admin_user)
    admin.get_by_role("link", name="Audit").click()
    row = admin.locator("#audit-entries tbody tr", has_text="cache-a")
    row.wait_for()
    text = row.inner_text()
    assert "otto" in text and "spec.size=3" in text and "spec.size=5" in text
    assert "applied" in text
    screenshot(admin, "audit")
    admin.get_by_role("link", name="Charts").click()
    admin.locator("section.chart", has_text="memcached").locator("svg rect").first.wait_for()
    screenshot(admin, "charts")
    admin.get_by_role("link", name="Overview").click()
    admin.get_by_role("heading", name="Resources by health").wait_for()
    engine_facts = admin.locator("section[aria-labelledby=engine-h]").inner_text()
    assert "Queues" in engine_facts and "none alive" not in engine_facts
    screenshot(admin, "overview")


def test_operator_gives_the_pods_a_memory_limit_and_they_roll_out_with_it(
    browser, running_engine, cluster_kube: ApiKube, namespace: str, page_as, operator,
    live_server,
) -> None:  # fmt: skip
    create_memcached(cluster_kube, namespace, "cache-a", size=1)
    wait_for(lambda: _mirrored_nodes(namespace) == 1, timeout=60, what="1 pod in the status")
    page = page_as(operator)
    page.goto(f"{live_server.url}/k/memcached/{namespace}/cache-a/")

    page.get_by_label("Memory limit").fill("128 MB")
    page.get_by_role("button", name="Review change").click()
    page.get_by_text("Not a quantity: write a number of bytes with a unit").wait_for()
    page.get_by_label("Memory limit").fill("128Mi")
    page.get_by_role("button", name="Review change").click()
    diff = page.locator("[id^=cr-diff-]")
    diff.wait_for()
    assert "spec.resources.limits.memory" in diff.inner_text() and "128Mi" in diff.inner_text()
    page.get_by_role("button", name="Apply").click()
    page.get_by_text("Applied:").wait_for()

    # The spec on the page, then the pod the operator rolled out with the limit.
    spec = page.locator("[id^=cr-spec-]")
    wait_for(lambda: "resources.limits.memory" in spec.inner_text(), what="the limit in the spec")

    def limited() -> bool:
        pods, _ = cluster_kube.list(POD, namespace)
        limits = [p["spec"]["containers"][0].get("resources", {}).get("limits") for p in pods]
        return limits == [{"memory": "128Mi"}]

    wait_for(limited, timeout=60, what="one pod, with the 128Mi limit")
