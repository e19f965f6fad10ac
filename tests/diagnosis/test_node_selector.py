"""A Ptemplate whose node selector matches no node: its page's Diagnosis names the CR's
field (spec.nodeSelector) and points to the change form, which sets it; reviewed and
applied there, its DaemonSet runs a pod on the node now selected. Real watcher and worker,
on kubesim and on a real cluster (OPSBOARD_TEST_KUBECONFIG)."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from controllers.base import DAEMONSET
from controllers.fields import deep_get
from controllers.kube import ApiKube
from opsboard.audit.models import AuditEntry
from tests.controllers.ptemplate_helpers import NODE, SPEC
from tests.diagnosis.memcached_run import page_finding, run_ptemplate
from tests.fixtures.celery import EngineProcesses
from tests.support.review import review
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)
NOWHERE = {"hw.example.com/accel": "yes"}  # no node has this label


def test_a_selector_no_node_matches_is_named_and_set_right_from_the_form(
    engine: EngineProcesses, cluster_kube: ApiKube, namespace: str, operator_client: Client
) -> None:
    run_ptemplate(engine, cluster_kube, namespace, NOWHERE)
    url, hx = f"/k/ptemplate/{namespace}/pt/", {"HTTP_HX_REQUEST": "true"}
    finding = wait_for(
        lambda: page_finding(operator_client, url, "NoMatchingNodes"),
        what="no matching node on the page",
    )
    # The mirrored Nodes tell it: no label, rather than a taint.
    assert (
        "DaemonSet pt-consumer runs no pod: no node has the labels hw.example.com/accel=yes ("
        in finding.what
    )
    assert finding.todo == (
        "Label the nodes that should run it (kubectl label node NODE hw.example.com/accel=yes), "
        "or change the CR's node selector, spec.nodeSelector."
    )
    page = operator_client.get(url).content.decode()
    assert re.search(
        r'The <a href="#cr-patch-[^"]+">change form</a> above sets spec\.nodeSelector\.', page
    )

    nodes, _ = cluster_kube.list(NODE)
    node = sorted(n["metadata"]["name"] for n in nodes)[0]
    chosen = f"kubernetes.io/hostname={node}"  # every kubelet labels its node so
    form = {"image": SPEC["image"], "memory": "", "devices": "0", "node_selector": chosen}
    html, hidden = review(operator_client, url, form, **hx)
    assert re.search(r"spec\.nodeSelector\.hw\.example\.com/accel</td><td><del>yes</del>", html)
    assert "Applied" in operator_client.post(url + "patch/apply/", hidden, **hx).content.decode()
    entry = AuditEntry.objects.get()
    assert entry.after == {"spec.nodeSelector": {"kubernetes.io/hostname": node}}

    def scheduled() -> bool:
        daemonset = cluster_kube.get(DAEMONSET, namespace, "pt-consumer") or {}
        selector = deep_get(daemonset, "spec.template.spec.nodeSelector")
        placed = deep_get(daemonset, "status.desiredNumberScheduled")
        return selector == {"kubernetes.io/hostname": node} and placed == 1

    wait_for(scheduled, what="the DaemonSet placing one pod on the node selected", timeout=120)
    wait_for(
        lambda: page_finding(operator_client, url, "NoMatchingNodes") is None,
        what="the finding gone from the page",
    )
