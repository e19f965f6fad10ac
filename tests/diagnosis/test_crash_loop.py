"""A container killed for memory each time it starts, diagnosed end to end (real watcher
and worker on kubesim, whose kubelet crash-loops a pod on request; the rig's cannot): the
namespace's LimitRange gave the operator's pods (which state no memory) a 64Mi limit, and
the Memcached's page says so and what to do, not only to read the logs; and what it says
to do, done, ends the crash loop."""

from __future__ import annotations

import re
import shlex
import time

import pytest
from django.test import Client
from kubernetes import client

from controllers.base import EVENT
from controllers.conditions import condition_of
from controllers.kube import ApiKube
from controllers.memcached.desired import MEMCACHED
from opsboard.diagnosis.observed import Finding
from opsboard.mirror.models import KubeObject
from tests.controllers.cluster import kubectl, list_objects
from tests.diagnosis.memcached_run import create_memcached, start_memcached_operator
from tests.fixtures.celery import EngineProcesses
from tests.fixtures.kubesim import KubesimHandle
from tests.kubesim.cluster.helpers import create_limit_range
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.kubesim_only, pytest.mark.django_db(transaction=True)]


def test_a_pod_oom_killed_at_a_limit_range_default_is_told_to_raise_it_and_remake_the_pods(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, viewer_client: Client, kubesim_server: KubesimHandle,
) -> None:  # fmt: skip
    core = client.CoreV1Api(kube_api_client)
    create_limit_range(core, namespace, "small", default={"memory": "64Mi"})
    start_memcached_operator(engine)
    create_memcached(cluster_kube, namespace, "cache", size=1)
    crs = KubeObject.objects.filter(kind="Memcached", namespace=namespace, name="cache")
    wait_for(lambda: crs.filter(health="Available").exists(), what="the Memcached available")
    [pod] = core.list_namespaced_pod(namespace).items
    assert pod.spec.containers[0].resources.limits == {"memory": "64Mi"}

    kubesim_server.cluster.crash_pod(
        namespace, pod.metadata.name, reason="OOMKilled", exit_code=137, loop=True
    )

    def crash_loop() -> Finding | None:
        findings = viewer_client.get(f"/k/memcached/{namespace}/cache/").context["diagnosis"]
        return next((f for f in findings.findings if f.code == "CrashLoopBackOff"), None)

    finding = wait_for(crash_loop, what="the CrashLoopBackOff finding")
    assert finding.subject == f"Pod {pod.metadata.name}"
    assert "container memcached of 1 pod keeps crashing" in finding.what
    assert "(last exit: OOMKilled, code 137)" in finding.what
    command = (
        f"kubectl -n {namespace} patch memcached cache --type merge -p "
        """'{"spec":{"resources":{"limits":{"memory":"128Mi"}}}}'"""
    )
    assert finding.todo.startswith(
        f"It used more than its memory limit 64Mi, a LimitRange's default (kubectl -n "
        f"{namespace} get limitrange): give it one of its own, set "
        f"spec.resources.limits.memory, e.g. to 128Mi ({command}); or raise that default"
    )
    assert f"kubectl logs -n {namespace} {pod.metadata.name} -c memcached --previous" in (
        finding.todo
    )
    # The page links that log, which a person without kubectl reads there.
    page = viewer_client.get(f"/k/memcached/{namespace}/cache/").content.decode()
    log = f"/k/memcached/{namespace}/cache/pods/{pod.metadata.name}/log/"
    assert f'<a href="{log}?container=memcached&amp;previous=1">That log, here</a>' in page
    shown = viewer_client.get(log, {"container": "memcached", "previous": "1"}).content.decode()
    assert "Container memcached, its previous run</h2>" in shown
    assert re.search(r'previous=1" aria-current="page">previous run</a>, \d+ restarts?\)', shown)
    # kubesim's containers log their start and exit: the run that ended, read as a kubelet does.
    assert "kubesim: container memcached exited with code 137 (OOMKilled)" in shown
    # And `kubectl get memcached` says it too: a memory limit, not a bug in memcached.
    wait_for(lambda: crs.filter(health="Degraded").exists(), what="the Memcached Degraded")
    degraded = condition_of(cluster_kube.get(MEMCACHED, namespace, "cache"), "Degraded")
    assert degraded and degraded["reason"] == "PodsCrashing"
    assert "keeps crashing (last exit: OOMKilled, code 137)" in degraded["message"]

    # The advice's command, run as written, gives the pods 128Mi and ends the crash loop.
    done = kubectl(kubesim_server.kubeconfig_path, *shlex.split(command)[1:])
    assert done.returncode == 0, done.stderr

    def limits() -> list[object]:
        pods = core.list_namespaced_pod(namespace).items
        return [p.spec.containers[0].resources.limits for p in pods]

    wait_for(lambda: limits() == [{"memory": "128Mi"}], what="one pod, with 128Mi")
    wait_for(lambda: crs.filter(health="Available").exists(), what="the Memcached available")
    findings = viewer_client.get(f"/k/memcached/{namespace}/cache/").context["diagnosis"]
    assert [f.code for f in findings.findings] == []


def test_a_crash_loop_keeps_the_cr_degraded_between_its_restarts_with_one_warning(
    engine: EngineProcesses, cluster_kube: ApiKube, kube_api_client: client.ApiClient,
    namespace: str, kubesim_server: KubesimHandle,
) -> None:  # fmt: skip
    """Between two back-offs the container runs (here, ready) for a moment: the CR stays
    Degraded/PodsCrashing through it rather than turning AsExpected and Degraded again, with
    a Warning each time, at every restart."""
    core = client.CoreV1Api(kube_api_client)
    start_memcached_operator(engine)
    create_memcached(cluster_kube, namespace, "cache", size=1)
    crs = KubeObject.objects.filter(kind="Memcached", namespace=namespace, name="cache")
    wait_for(lambda: crs.filter(health="Available").exists(), what="the Memcached available")
    [pod] = core.list_namespaced_pod(namespace).items
    options = kubesim_server.cluster.options
    options.crash_backoff = 0.5  # a real node's 10 s, here shortened: 0.5, 1, 2, 4 s
    try:
        kubesim_server.cluster.crash_pod(namespace, pod.metadata.name, loop=True)

        def reason() -> str | None:
            return condition_of(cluster_kube.get(MEMCACHED, namespace, "cache"), "Degraded").get(
                "reason"
            )

        wait_for(lambda: reason() == "PodsCrashing", what="Degraded/PodsCrashing")
        first = core.read_namespaced_pod(pod.metadata.name, namespace)
        seen, states = set(), set()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            seen.add(reason())
            status = core.read_namespaced_pod(pod.metadata.name, namespace).status
            container = status.container_statuses[0]
            states.add("running" if container.state.running else "waiting")
            time.sleep(0.05)
        restarts = core.read_namespaced_pod(pod.metadata.name, namespace).status
        assert (
            restarts.container_statuses[0].restart_count
            >= first.status.container_statuses[0].restart_count + 2
        )
        assert states == {"running", "waiting"}  # it did run between its back-offs
        assert seen == {"PodsCrashing"}
        warnings = [
            e
            for e in list_objects(cluster_kube, EVENT, namespace)
            if e["involvedObject"].get("kind") == "Memcached" and e["type"] == "Warning"
        ]
        assert [(e["reason"], e.get("count", 1)) for e in warnings] == [("PodsCrashing", 1)]
    finally:
        options.crash_backoff = 10.0
