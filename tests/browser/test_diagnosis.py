"""Why a CR is not converging, in a browser: the diagnosis section, live, names the cause."""

from __future__ import annotations

import pytest

from controllers.base import Key
from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from controllers.ptemplate.desired import PTEMPLATE
from opsboard.audit.models import AuditEntry
from opsboard.engine.enqueue import reconcile_enqueue_many
from opsboard.mirror.models import KubeObject
from tests.browser.conftest import screenshot
from tests.controllers.ptemplate_helpers import SPEC, install_kmm_crd, make_secret
from tests.dashboard.mirror_factory import MEMCACHED_API
from tests.support.waiting import wait_for

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
    wait_for(
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

    # The history names the change and its author; reverting it goes through the review.
    row = page.locator(f"#history tr[data-entry='{entry.pk}']")
    assert "spec.image" in row.inner_text() and BAD_IMAGE in row.inner_text()
    assert f"{operator.username} through opsboard (entry {entry.pk})" in row.inner_text()
    row.get_by_role("button", name="Revert to before this change").click()
    page.get_by_text(f"Revert entry {entry.pk}").wait_for()
    diff = page.locator("[id^=cr-diff-]").inner_text()
    assert "spec.image" in diff and "memcached:1.6.21-alpine" in diff
    page.get_by_role("button", name="Apply").click()
    page.get_by_text("Applied:").wait_for()
    revert = AuditEntry.objects.get(reverts=entry)
    assert revert.after == {"spec.image": "memcached:1.6.21-alpine"}
    assert revert.message.startswith(f"Revert of entry {entry.pk}.")

    wait_for(lambda: _health(namespace, "cache-d") == "Available", timeout=90,
             what="cache-d Available again")  # fmt: skip
    diagnosis.get_by_text("Healthy: Available").wait_for(timeout=30_000)
    page.locator(
        f"#history tr[data-entry='{revert.pk}']", has_text=f"revert of entry {entry.pk}"
    ).wait_for()
    screenshot(page, "history-reverted")


def test_a_runs_merged_triggers_and_queue_wait_are_shown(
    browser, engine, cluster_kube: ApiKube, namespace: str, page_as, viewer, live_server,
) -> None:  # fmt: skip
    cluster_kube.create(MEMCACHED, {
        "apiVersion": MEMCACHED_API, "kind": "Memcached",
        "metadata": {"name": "cache-t", "namespace": namespace}, "spec": {"size": 1},
    })  # fmt: skip
    # Before any worker runs, three events queue the key: one run serves them all.
    key = Key("memcached", namespace, "cache-t")
    reconcile_enqueue_many([
        (key, "event", f"MODIFIED Pod {namespace}/cache-t-1"),
        (key, "event", f"MODIFIED Deployment {namespace}/cache-t"),
        (key, "event", f"MODIFIED Memcached {namespace}/cache-t"),
    ])  # fmt: skip
    engine.start_worker()
    engine.start_watcher()
    wait_for(lambda: _health(namespace, "cache-t") == "Available", timeout=60,
               what="cache-t Available")  # fmt: skip

    page = page_as(viewer)
    page.goto(f"{live_server.url}/k/memcached/{namespace}/cache-t/")
    merged = page.locator(".timeline details.merged").last  # the first run is the oldest row
    merged.wait_for()
    assert "triggers merged" in merged.inner_text()
    merged.locator("summary").click()
    text = merged.inner_text()
    assert f"MODIFIED Pod {namespace}/cache-t-1" in text
    assert f"MODIFIED Deployment {namespace}/cache-t" in text and "ms before the start" in text
    timeline = page.locator(".timeline").last.inner_text()
    assert "waited" in timeline and "ms in the queue" in timeline and " · on " in timeline
    screenshot(page, "timeline-merged-triggers")


def test_a_ptemplate_whose_selector_matches_no_node_is_diagnosed_as_such(
    browser, engine, kubesim_server, cluster_kube: ApiKube, namespace: str, page_as, viewer,
    live_server,
) -> None:  # fmt: skip
    install_kmm_crd(kubesim_server.kubeconfig_path)  # before the watcher, as make run does
    engine.start_worker()
    engine.start_watcher()
    make_secret(cluster_kube, namespace)
    selector = {"hw.example.com/accel": "yes"}  # no node has this label
    cluster_kube.create(PTEMPLATE, {
        "apiVersion": PTEMPLATE.api_version, "kind": PTEMPLATE.kind,
        "metadata": {"name": "pt-none", "namespace": namespace},
        "spec": {**SPEC, "deviceCount": 1, "nodeSelector": selector},
    })  # fmt: skip
    # Until the watcher mirrors the CR its page is a 404, and a 404 page does not refresh.
    wait_for(
        lambda: KubeObject.objects.filter(
            kind=PTEMPLATE.kind, namespace=namespace, name="pt-none"
        ).exists(),
        timeout=60,
        what="pt-none mirrored",
    )

    page = page_as(viewer)
    page.goto(f"{live_server.url}/k/ptemplate/{namespace}/pt-none/")
    finding = page.locator("#diagnosis li[data-code=NoMatchingNodes]")
    finding.wait_for(timeout=60_000)
    text = finding.inner_text()
    assert "DaemonSet pt-none-consumer runs no pod" in text
    assert "no node has the labels hw.example.com/accel=yes" in text
    assert "kubectl label node NODE hw.example.com/accel=yes" in text
    screenshot(page, "diagnosis-no-matching-node")
