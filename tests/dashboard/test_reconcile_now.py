"""'Reconcile now' and patches through the real engine: the key is queued, a worker runs
it, the CR's log shows the run, and the audit entry is linked to the run that observed it
as that run is recorded (nobody has to open the audit page)."""

from __future__ import annotations

import pytest
from django.test import Client

from controllers.base import Key
from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from opsboard.audit.models import AuditEntry
from opsboard.engine.enqueue import send
from opsboard.engine.models import ReconcileRun
from opsboard.engine.queue import Why, queue_for
from opsboard.mirror.models import KubeObject
from tests.dashboard.mirror_factory import MEMCACHED_API
from tests.support.review import hidden_fields
from tests.support.waiting import settled, wait_for

pytestmark = pytest.mark.django_db(transaction=True)
IMAGE = "memcached:1.4.36-alpine"


def _settled_cache(kube: ApiKube, namespace: str, *, size: int = 1) -> str:
    """Creates cache-a and waits until the engine has reconciled it; returns its page URL."""
    kube.create(MEMCACHED, {
        "apiVersion": MEMCACHED_API, "kind": "Memcached",
        "metadata": {"name": "cache-a", "namespace": namespace},
        "spec": {"size": size, "image": IMAGE},
    })  # fmt: skip
    mirrored = KubeObject.objects.filter(kind="Memcached", namespace=namespace, name="cache-a")
    wait_for(mirrored.filter(health="Available").exists, what="the CR Available in the mirror")
    runs = ReconcileRun.objects.filter(namespace=namespace, name="cache-a").order_by("-started_at")
    wait_for(lambda: (last := runs.first()) and last.outcome == "success", what="a settled CR")
    # A late event of the settling CR (its Deployment's status, say) may still queue the key:
    # wait until runs stop coming, so that the next "Reconcile now" finds it free.
    settled(runs.count, for_s=2.0, what="the CR's runs")
    return f"/k/memcached/{namespace}/cache-a/"


def test_reconcile_now_queues_a_manual_run_that_the_log_and_audit_show(
    running_engine, cluster_kube: ApiKube, namespace: str, operator_client: Client
) -> None:
    url = _settled_cache(cluster_kube, namespace)

    response = operator_client.post(url + "reconcile/", HTTP_HX_REQUEST="true")
    assert "Queued memcached/" in response.content.decode()

    manual = ReconcileRun.objects.filter(namespace=namespace, name="cache-a", trigger="manual")
    run = wait_for(lambda: manual.exclude(outcome="").first(), what="a finished manual run")
    html = operator_client.get(url + "live/").content.decode()
    assert "manual" in html and "by otto" in html
    entries = AuditEntry.objects.filter(action="reconcile")
    entry = wait_for(lambda: entries.filter(observed_by__isnull=False).first(), what="a link")
    assert (entry.username, entry.result) == ("otto", "applied")
    assert entry.observed_by_id == run.pk


def test_a_patch_is_linked_to_the_run_that_observed_it_without_opening_the_audit(
    running_engine, cluster_kube: ApiKube, namespace: str, operator_client: Client
) -> None:
    url = _settled_cache(cluster_kube, namespace)
    review = operator_client.post(url + "patch/", {"size": "2", "image": IMAGE},
                                  HTTP_HX_REQUEST="true").content.decode()  # fmt: skip
    hidden = hidden_fields(review)
    applied = operator_client.post(url + "patch/apply/", hidden, HTTP_HX_REQUEST="true")
    assert "Applied:" in applied.content.decode()
    entry = AuditEntry.objects.get(action="patch", result="applied")
    assert entry.generation == cluster_kube.get(MEMCACHED, namespace, "cache-a")["metadata"][
        "generation"]  # fmt: skip

    linked = AuditEntry.objects.filter(pk=entry.pk, observed_by__isnull=False)
    entry = wait_for(linked.first, what="the patch linked to the run that observed it")
    run = entry.observed_by
    assert (run.uid, run.namespace, run.name) == (entry.uid, namespace, "cache-a")
    assert run.generation >= entry.generation
    assert run.started_at >= entry.at
    earlier = ReconcileRun.objects.filter(
        uid=entry.uid, generation__gte=entry.generation, started_at__lt=run.started_at
    )
    assert not earlier.filter(started_at__gte=entry.at).exists()  # the first such run


def test_reconcile_now_on_a_queued_key_says_so_and_the_log_shows_the_run(
    running_engine, cluster_kube: ApiKube, namespace: str, operator_client: Client
) -> None:
    url = _settled_cache(cluster_kube, namespace)
    key = Key("memcached", namespace, "cache-a")
    watcher_why = Why("event", "MODIFIED Memcached")
    # Queued, not yet pushed onto the ready list. A late event of the settling CR may hold the key for a
    # moment: queue it as soon as it is free.
    wait_for(lambda: queue_for("memcached").add(key, watcher_why), what="the key free to queue")

    response = operator_client.post(url + "reconcile/", HTTP_HX_REQUEST="true")
    message = response.content.decode()
    assert "already queued — it will run in a moment; the log below shows it" in message
    assert response["HX-Trigger"] == "cr-changed"  # the log refreshes at once

    send(key)  # the watcher's push arrives
    manual = ReconcileRun.objects.filter(namespace=namespace, name="cache-a", trigger="manual")
    run = wait_for(lambda: manual.exclude(outcome="").first(), what="the run, shown as manual")
    assert run.trigger_detail == "by otto"
    html = operator_client.get(url + "live/").content.decode()
    assert "<td>manual <small>by otto</small>" in html  # then its timeline
