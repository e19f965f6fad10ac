"""'Reconcile now' through the real engine: the key is queued, a worker runs it with
trigger "manual", the CR's log shows the run and the audit entry links to it."""

from __future__ import annotations

import pytest
from django.test import Client

from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from opsboard.audit.models import AuditEntry
from opsboard.audit.services import audit_link_observers
from opsboard.engine.models import ReconcileRun
from opsboard.mirror.models import KubeObject
from tests.browser.test_rollout import wait_for
from tests.dashboard.mirror_factory import MEMCACHED_API

pytestmark = pytest.mark.django_db(transaction=True)


def test_reconcile_now_queues_a_manual_run_that_the_log_and_audit_show(
    running_engine, cluster_kube: ApiKube, namespace: str, operator_client: Client
) -> None:
    cluster_kube.create(MEMCACHED, {
        "apiVersion": MEMCACHED_API, "kind": "Memcached",
        "metadata": {"name": "cache-a", "namespace": namespace}, "spec": {"size": 1},
    })  # fmt: skip
    mirrored = KubeObject.objects.filter(kind="Memcached", namespace=namespace, name="cache-a")
    wait_for(mirrored.filter(health="Available").exists, what="the CR Available in the mirror")
    runs = ReconcileRun.objects.filter(namespace=namespace, name="cache-a").order_by("-started_at")
    wait_for(lambda: (last := runs.first()) and last.outcome == "success", what="a settled CR")
    url = f"/k/memcached/{namespace}/cache-a/"

    response = operator_client.post(url + "reconcile/", HTTP_HX_REQUEST="true")
    assert "Queued memcached/" in response.content.decode()

    manual = ReconcileRun.objects.filter(namespace=namespace, name="cache-a", trigger="manual")
    run = wait_for(lambda: manual.exclude(outcome="").first(), what="a finished manual run")
    html = operator_client.get(url + "live/").content.decode()
    assert "manual" in html and "by otto" in html
    entry = AuditEntry.objects.get(action="reconcile")
    assert (entry.username, entry.result) == ("otto", "applied")
    audit_link_observers()
    entry.refresh_from_db()
    assert entry.observed_by_id == run.pk
