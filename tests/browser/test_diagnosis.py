"""Why a CR is not converging, in a browser: the diagnosis section, live, names the cause."""

from __future__ import annotations

import pytest

from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from opsboard.audit.models import AuditEntry
from opsboard.mirror.models import KubeObject
from tests.browser.conftest import screenshot
from tests.controllers.cluster import wait_until
from tests.dashboard.mirror_factory import MEMCACHED_API

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
BAD_IMAGE = "memcached:does-not-exist"


def _health(namespace: str, name: str) -> str:
    cr = KubeObject.objects.filter(kind="Memcached", namespace=namespace, name=name).first()
    return cr.health if cr else ""


def test_a_bad_image_is_diagnosed_with_the_audit_entry_that_set_it(
    browser, running_engine, cluster_kube: ApiKube, namespace: str, page_as, operator,
    live_server,
) -> None:  # fmt: skip
    cluster_kube.create(MEMCACHED, {
        "apiVersion": MEMCACHED_API, "kind": "Memcached",
        "metadata": {"name": "cache-d", "namespace": namespace},
        "spec": {"size": 2, "image": "memcached:1.6.21-alpine"},
    })  # fmt: skip
    wait_until(
        lambda: _health(namespace, "cache-d") == "Available", timeout=60, what="cache-d Available"
    )

    page = page_as(operator)
    page.goto(f"{live_server.url}/k/memcached/{namespace}/cache-d/")
    diagnosis = page.locator("#diagnosis")
    diagnosis.get_by_text("Healthy: Available").wait_for()

    page.get_by_role("textbox", name="Image").fill(BAD_IMAGE)
    page.get_by_role("button", name="Review change").click()
    page.get_by_role("button", name="Apply").click()
    page.get_by_text("Applied:").wait_for()
    entry = AuditEntry.objects.get(namespace=namespace, name="cache-d", result="applied")

    # Live: the section turns to the cause without a reload, as the pods fail to pull.
    finding = diagnosis.locator("li[data-code=ImagePullBackOff]")
    finding.wait_for(timeout=60_000)
    text = finding.inner_text()
    assert f"cannot pull image {BAD_IMAGE}" in text
    assert f"change #{entry.pk} of the audit ({operator.username}" in text
    assert f"revert change #{entry.pk}" in text
    screenshot(page, "diagnosis-image-pull")
