"""A cluster whose controllers do not act, diagnosed end to end (real watcher and worker on
kubesim, its controllers paused as a stopped kube-controller-manager would leave them): the
Memcached's Deployment keeps an unobserved generation, and the Diagnosis says why no pod
comes instead of "Progressing"."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from controllers.kube import ApiKube
from opsboard.diagnosis.findings import CONTROLLER_GRACE_SECONDS
from opsboard.mirror.models import KubeObject
from tests.diagnosis.memcached_run import create_memcached, start_memcached_operator
from tests.fixtures.celery import EngineProcesses
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.kubesim_only, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def controllers_paused(kubesim_server: Any) -> Iterator[None]:
    kubesim_server.cluster.pause("controllers")
    try:
        yield
    finally:
        kubesim_server.cluster.resume("controllers")


def test_a_deployment_no_controller_acts_on_is_named_with_the_cluster_to_check(
    controllers_paused: None, engine: EngineProcesses, cluster_kube: ApiKube, namespace: str,
    viewer_client: Client,
) -> None:  # fmt: skip
    start_memcached_operator(engine)
    create_memcached(cluster_kube, namespace, "unseen", size=2)
    mirrored = KubeObject.objects.filter(kind="Deployment", namespace=namespace, name="unseen")
    wait_for(mirrored.exists, what="the operator's Deployment in the mirror")
    path = f"/k/memcached/{namespace}/unseen/"
    assert "NotObserved" not in {
        f.code for f in viewer_client.get(path).context["diagnosis"].findings
    }

    # As it stands a minute on: nothing about the Deployment has changed since it was written.
    mirrored.update(mirrored_at=timezone.now() - timedelta(seconds=CONTROLLER_GRACE_SECONDS + 5))
    findings = {f.code: f for f in viewer_client.get(path).context["diagnosis"].findings}
    finding = findings["NotObserved"]
    assert finding.subject == "Deployment unseen"
    assert "is at generation 1 and it has no status" in finding.what
    assert "deployment controller has not acted on it" in finding.what
    assert "kube-controller-manager" in finding.todo
