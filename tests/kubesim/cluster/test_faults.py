"""Cluster faults: pause/resume, pod crashes and deletions, nodes going NotReady, coming and going."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client, watch

from tests.kubesim.cluster.helpers import (
    condition,
    control,
    deployment,
    events_for,
    is_ready,
    make_ready,
    make_unready,
    pod,
    pods_of,
    wait_for,
)
from tests.kubesim.support import kubesim_cli

pytestmark = pytest.mark.kubesim_only

SELECTOR = "app=memcached,memcached_cr=memcached"


@pytest.fixture
def cluster(kubesim_server) -> Iterator[object]:
    """The session's simulated cluster, put back as it was after each test."""
    sim_cluster = kubesim_server.cluster
    nodes = {n["metadata"]["name"] for n in sim_cluster.cache.list("nodes")}
    yield sim_cluster
    for group in ("controllers", "kubelet"):
        sim_cluster.resume(group)
    for name in list(sim_cluster.nodes.down):
        sim_cluster.set_node_ready(name, True)
    for node in sim_cluster.cache.list("nodes"):
        if node["metadata"]["name"] not in nodes:
            sim_cluster.remove_node(node["metadata"]["name"])
    sim_cluster.missing_images = ["*:does-not-exist"]


def read(core: client.CoreV1Api, namespace: str, name: str) -> client.V1Pod:
    return core.read_namespaced_pod(name, namespace)


def test_paused_controllers_do_nothing_until_resumed(cluster, apps, namespace):
    cluster.pause("controllers")
    apps.create_namespaced_deployment(namespace, deployment("memcached", replicas=1))
    assert cluster.paused() == ["controllers"]
    # A later write is seen by the store, but no controller reacts to either.
    apps.patch_namespaced_deployment(
        "memcached", namespace, {"metadata": {"labels": {"later": "yes"}}}
    )
    assert apps.list_namespaced_replica_set(namespace).items == []
    assert not apps.read_namespaced_deployment("memcached", namespace).status.observed_generation

    cluster.resume("controllers")

    wait_for(
        lambda: (
            apps.read_namespaced_deployment("memcached", namespace).status.available_replicas == 1
        ),
        what="resumed",
    )


def restarted(core: client.CoreV1Api, namespace: str, name: str, restarts: int) -> bool:
    p = read(core, namespace, name)
    return p.status.container_statuses[0].restart_count == restarts and is_ready(p)


def test_a_paused_kubelet_leaves_bound_pods_pending(cluster, core, namespace):
    cluster.pause("kubelet")
    core.create_namespaced_pod(namespace, pod("idle"))

    bound = wait_for(
        lambda: (p := read(core, namespace, "idle")).spec.node_name and p, what="binding"
    )
    assert bound.status.phase == "Pending" and not bound.status.container_statuses

    cluster.resume("kubelet")

    wait_for(lambda: is_ready(read(core, namespace, "idle")), what="started after resume")


def test_a_crashed_pod_restarts_and_counts_it(cluster, core, namespace):
    core.create_namespaced_pod(namespace, pod("flaky"))
    wait_for(lambda: is_ready(read(core, namespace, "flaky")), what="Ready")
    since = read(core, namespace, "flaky").metadata.resource_version

    cluster.crash_pod(namespace, "flaky")

    wait_for(lambda: restarted(core, namespace, "flaky", 1), what="restarted and Ready")
    p = read(core, namespace, "flaky")
    last = p.status.container_statuses[0].last_state.terminated
    assert (last.reason, last.exit_code) == ("Error", 1)
    # Replaying the pod's changes since the crash shows it was not ready in between.
    changes = watch.Watch().stream(
        core.list_namespaced_pod,
        namespace,
        field_selector="metadata.name=flaky",
        resource_version=since,
        timeout_seconds=1,
    )
    states = [
        (is_ready(e["object"]), e["object"].status.container_statuses[0].restart_count)
        for e in changes
    ]
    assert (False, 1) in states


def test_a_crash_loop_backs_off_twice_as_long_each_time_as_a_kubelet_does(cluster, core, namespace):
    """OOMKilled each time it starts: waiting in CrashLoopBackOff between, with the real
    kubelet's words, the last exit kept, the pod still Running but not ready."""
    cluster.options.crash_backoff = 0.5  # a real node's 10 s, here shortened
    try:
        core.create_namespaced_pod(namespace, pod("oom"))
        wait_for(lambda: is_ready(read(core, namespace, "oom")), what="Ready")
        cluster.crash_pod(namespace, "oom", reason="OOMKilled", exit_code=137, loop=True)

        def backing_off(restarts: int, back_off: str):
            p = read(core, namespace, "oom")
            status = p.status.container_statuses[0]
            waiting = status.state.waiting
            found = waiting and status.restart_count == restarts and back_off in waiting.message
            return (p, status) if found else None

        p, status = wait_for(lambda: backing_off(2, "back-off 500ms "), what="CrashLoopBackOff")
        uid = p.metadata.uid
        assert status.state.waiting.reason == "CrashLoopBackOff"
        assert status.state.waiting.message == (
            f"back-off 500ms restarting failed container=main pod=oom_{namespace}({uid})"
        )
        assert (status.last_state.terminated.reason, status.last_state.terminated.exit_code) == (
            "OOMKilled",
            137,
        )
        assert status.container_id == status.last_state.terminated.container_id
        assert (p.status.phase, is_ready(p), status.started) == ("Running", False, False)
        # Restarted at once after its first exit, as a kubelet does, and after each later
        # one in a back-off twice as long as the last.
        wait_for(lambda: backing_off(3, "back-off 1s "), what="the second back-off")
        [back_off] = [e for e in events_for(core, namespace, "oom") if e.reason == "BackOff"]
        assert back_off.type == "Warning" and back_off.count >= 2
        assert back_off.message == (
            f"Back-off restarting failed container main in pod oom_{namespace}({uid})"
        )
    finally:
        cluster.options.crash_backoff = 10.0


def test_crashing_again_grows_the_restart_count_and_aggregates_events(cluster, core, namespace):
    core.create_namespaced_pod(namespace, pod("flaky"))
    for restarts in (1, 2):
        wait_for(lambda: is_ready(read(core, namespace, "flaky")), what="Ready")
        cluster.crash_pod(namespace, "flaky")
        wait_for(
            lambda n=restarts: restarted(core, namespace, "flaky", n), what=f"restart {restarts}"
        )

    started = wait_for(
        lambda: [
            e
            for e in core.list_namespaced_event(namespace).items
            if e.involved_object.name == "flaky" and e.reason == "Started" and e.count == 3
        ],
        what="one Started event counted three times",
    )
    assert started[0].message == "Started container main"
    assert started[0].last_timestamp >= started[0].first_timestamp


def test_deleting_a_pod_through_the_control_api_gets_it_replaced(
    cluster, apps, core, namespace, kube_api_client
):
    apps.create_namespaced_deployment(namespace, deployment("memcached", replicas=2))
    wait_for(
        lambda: (
            apps.read_namespaced_deployment("memcached", namespace).status.available_replicas == 2
        ),
        what="2 pods",
    )
    victim = pods_of(core, namespace, SELECTOR)[0].metadata.name

    control(kube_api_client, "POST", f"/_kubesim/cluster/pods/{namespace}/{victim}/delete", {})

    def replaced() -> bool:
        names = {p.metadata.name for p in pods_of(core, namespace, SELECTOR) if is_ready(p)}
        return len(names) == 2 and victim not in names

    wait_for(replaced, what="a replacement")


def test_a_node_going_not_ready_makes_its_pods_not_ready(cluster, core, namespace):
    node = core.list_node().items[0].metadata.name
    core.create_namespaced_pod(
        namespace, pod("stranded", nodeSelector={"kubernetes.io/hostname": node})
    )
    wait_for(lambda: is_ready(read(core, namespace, "stranded")), what="Ready")

    cluster.set_node_ready(node, False)

    stranded = wait_for(
        lambda: not is_ready(p := read(core, namespace, "stranded")) and p, what="pod not ready"
    )
    # As v1.28's MarkPodsNotReady leaves it (seen on a real control plane): only the Ready
    # condition's status changes; no kubelet is left to update the containers' statuses.
    ready = condition(stranded, "Ready")
    assert (ready.status, ready.reason, ready.message) == ("False", None, None)
    assert condition(stranded, "ContainersReady").status == "True"
    assert stranded.status.phase == "Running"
    assert [c.ready for c in stranded.status.container_statuses] == [True]
    n = core.read_node(node)
    assert condition(n, "Ready").status == "Unknown"
    assert {(t.key, t.effect) for t in n.spec.taints} == {
        ("node.kubernetes.io/unreachable", "NoSchedule"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
    }
    core.create_namespaced_pod(
        namespace, pod("newcomer", nodeSelector={"kubernetes.io/hostname": node})
    )
    cond = wait_for(
        lambda: condition(read(core, namespace, "newcomer"), "PodScheduled"), what="unschedulable"
    )
    assert cond.reason == "Unschedulable" and "node.kubernetes.io/unreachable" in cond.message

    cluster.set_node_ready(node, True)

    wait_for(lambda: is_ready(read(core, namespace, "stranded")), what="pod ready again")
    wait_for(lambda: is_ready(read(core, namespace, "newcomer")), what="the waiting pod scheduled")
    assert not core.read_node(node).spec.taints


def test_nodes_can_be_added_and_removed_over_http(cluster, core, kube_api_client):
    before = {n.metadata.name for n in core.list_node().items}

    added = control(kube_api_client, "POST", "/_kubesim/cluster/nodes")["name"]

    assert added not in before
    wait_for(
        lambda: condition(core.read_node(added), "Ready").status == "True", what="new node Ready"
    )
    control(kube_api_client, "DELETE", f"/_kubesim/cluster/nodes/{added}")
    assert {n.metadata.name for n in core.list_node().items} == before


def test_pods_of_a_removed_node_are_deleted(cluster, core, namespace):
    node = cluster.add_node()["metadata"]["name"]
    core.create_namespaced_pod(
        namespace, pod("orphan", nodeSelector={"kubernetes.io/hostname": node})
    )
    wait_for(lambda: is_ready(read(core, namespace, "orphan")), what="Ready")

    cluster.remove_node(node)

    def gone() -> bool:
        try:
            read(core, namespace, "orphan")
        except client.ApiException as exc:
            return exc.status == 404
        return False

    wait_for(gone, what="the pod of the removed node to go")


def test_the_missing_image_list_is_configurable(cluster, core, namespace, kube_api_client):
    control(
        kube_api_client,
        "PUT",
        "/_kubesim/cluster/missing-images",
        {"patterns": ["example.com/private/*"]},
    )

    core.create_namespaced_pod(namespace, pod("private", image="example.com/private/app:1.0"))
    core.create_namespaced_pod(namespace, pod("fine", image="nginx:does-not-exist"))

    def reason(name: str) -> str | None:
        statuses = read(core, namespace, name).status.container_statuses or []
        return statuses[0].state.waiting.reason if statuses and statuses[0].state.waiting else None

    wait_for(lambda: reason("private") in ("ErrImagePull", "ImagePullBackOff"), what="pull failure")
    wait_for(lambda: is_ready(read(core, namespace, "fine")), what="no longer missing")
    assert control(kube_api_client, "GET", "/_kubesim/cluster/missing-images") == {
        "patterns": ["example.com/private/*"]
    }


def test_an_unknown_group_is_a_bad_request(cluster, kube_api_client):
    with pytest.raises(client.ApiException) as err:
        control(kube_api_client, "POST", "/_kubesim/cluster/pause/everything")

    assert err.value.status == 400


def test_the_cli_drives_the_same_faults(cluster, kubesim_server, core):
    node = core.list_node().items[0].metadata.name

    def cli(*args: str) -> dict:
        return kubesim_cli(kubesim_server.url, "cluster", *args)

    assert cli("node-notready", node) == {"name": node, "ready": False}
    wait_for(lambda: condition(core.read_node(node), "Ready").status == "Unknown", what="NotReady")
    status = cli("status")
    assert {"name": node, "ready": False} in status["nodes"]
    cli("node-ready", node)
    assert cli("pause", "kubelet")["paused"] == ["kubelet"]
    assert cli("resume", "kubelet")["paused"] == []


def test_the_cli_starts_a_crash_loop(cluster, kubesim_server, core, namespace):
    core.create_namespaced_pod(namespace, pod("oom"))
    wait_for(lambda: is_ready(read(core, namespace, "oom")), what="Ready")
    args = ("--reason", "OOMKilled", "--exit-code", "137", "--loop")
    assert kubesim_cli(kubesim_server.url, "cluster", "crash-pod", f"{namespace}/oom", *args) == {
        "crashed": f"{namespace}/oom"
    }
    status = wait_for(
        lambda: (
            (s := read(core, namespace, "oom").status.container_statuses[0]).state.waiting and s
        ),
        what="CrashLoopBackOff",
    )
    assert status.state.waiting.reason == "CrashLoopBackOff"
    assert status.state.waiting.message.startswith("back-off 10s restarting failed container")
    assert status.last_state.terminated.reason == "OOMKilled"


def test_a_refused_start_keeps_the_container_waiting_until_allowed(
    cluster, kubesim_server, core, namespace
):
    """As a kubelet whose container's Secret is missing: the container exits and waits with
    CreateContainerConfigError and the kubelet's message, the pod stays Running (it ran) and
    not ready, and starts again once allowed (the Secret created)."""
    core.create_namespaced_pod(namespace, pod("cfg"))
    wait_for(lambda: is_ready(read(core, namespace, "cfg")), what="Ready")
    said = 'secret "cfg-auth" not found'
    target = f"{namespace}/cfg"
    assert kubesim_cli(kubesim_server.url, "cluster", "refuse-start", target, "--message", said) == {
        "refused": target, "reason": "CreateContainerConfigError",
    }  # fmt: skip

    def waiting() -> client.V1Pod | None:
        p = read(core, namespace, "cfg")
        return p if p.status.container_statuses[0].state.waiting else None

    p = wait_for(waiting, what="the container waiting")
    status = p.status.container_statuses[0]
    assert (status.state.waiting.reason, status.state.waiting.message) == (
        "CreateContainerConfigError", said
    )  # fmt: skip
    assert (p.status.phase, is_ready(p), status.restart_count) == ("Running", False, 1)
    assert status.last_state.terminated.reason == "Error"
    # The run that ended keeps its ID, as a kubelet's does: its log is the one read.
    assert status.last_state.terminated.container_id.startswith("containerd://")
    assert "exited with code 1 (Error)" in core.read_namespaced_pod_log("cfg", namespace)
    events = core.list_namespaced_event(namespace, field_selector="involvedObject.name=cfg")
    assert f"Error: {said}" in [e.message for e in events.items if e.reason == "Failed"]

    assert kubesim_cli(kubesim_server.url, "cluster", "allow-start", target) == {"refused": None}
    wait_for(lambda: is_ready(read(core, namespace, "cfg")), what="Ready again")


def test_scaling_down_removes_the_not_ready_pod_first(cluster, apps, core, namespace):
    apps.create_namespaced_deployment(namespace, deployment("memcached", replicas=3))
    wait_for(
        lambda: (
            apps.read_namespaced_deployment("memcached", namespace).status.available_replicas == 3
        ),
        what="3 pods",
    )
    victim = pods_of(core, namespace, SELECTOR)[1]
    cluster.set_node_ready(victim.spec.node_name, False)
    wait_for(
        lambda: not is_ready(read(core, namespace, victim.metadata.name)), what="victim not ready"
    )

    apps.patch_namespaced_deployment_scale("memcached", namespace, {"spec": {"replicas": 2}})

    def removed() -> bool:
        names = {
            p.metadata.name
            for p in pods_of(core, namespace, SELECTOR)
            if not p.metadata.deletion_timestamp
        }
        return len(names) == 2 and victim.metadata.name not in names

    wait_for(removed, what="the not-ready pod chosen for removal")


def test_pods_leave_an_unreachable_node_when_their_toleration_runs_out(
    cluster, apps, core, namespace
):
    body = deployment("memcached", replicas=1)
    body["spec"]["template"]["spec"]["tolerations"] = [
        {
            "key": "node.kubernetes.io/unreachable",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 1,
        }
    ]
    apps.create_namespaced_deployment(namespace, body)
    wait_for(
        lambda: (
            apps.read_namespaced_deployment("memcached", namespace).status.available_replicas == 1
        ),
        what="1 pod",
    )
    [first] = pods_of(core, namespace, SELECTOR)

    cluster.set_node_ready(first.spec.node_name, False)

    def replaced() -> bool:
        pods = pods_of(core, namespace, SELECTOR)
        evicted = next((p for p in pods if p.metadata.name == first.metadata.name), None)
        others = [p for p in pods if p.metadata.name != first.metadata.name and is_ready(p)]
        return bool(others) and (evicted is None or evicted.metadata.deletion_timestamp is not None)

    wait_for(replaced, what="an evicted pod replaced on another node")
    [replacement] = [
        p for p in pods_of(core, namespace, SELECTOR) if p.metadata.name != first.metadata.name
    ]
    assert replacement.spec.node_name != first.spec.node_name
    reasons = {
        e.reason
        for e in core.list_namespaced_event(namespace).items
        if e.involved_object.name == first.metadata.name
    }
    assert "TaintManagerEviction" in reasons


def test_a_crash_fails_a_pod_that_never_restarts(cluster, core, namespace):
    core.create_namespaced_pod(namespace, pod("once", restartPolicy="Never"))
    wait_for(lambda: is_ready(read(core, namespace, "once")), what="Ready")

    cluster.crash_pod(namespace, "once")

    p = wait_for(
        lambda: (p := read(core, namespace, "once")).status.phase == "Failed" and p, what="Failed"
    )
    cs = p.status.container_statuses[0]
    assert (cs.state.terminated.reason, cs.state.terminated.exit_code, cs.restart_count) == (
        "Error",
        1,
        0,
    )
    assert not is_ready(p)


def probed_pod(name: str, **probe: Any) -> dict[str, Any]:
    body = pod(name, image="nginx:1.25")
    body["spec"]["containers"][0] |= {
        "name": "web",
        "ports": [{"name": "http", "containerPort": 80}],
        "readinessProbe": {"periodSeconds": 1, **probe},
    }
    return body


def test_an_unready_pod_keeps_running_and_its_events_say_the_probe_fails(
    cluster, core, namespace, kube_api_client
):
    core.create_namespaced_pod(
        namespace, probed_pod("web", httpGet={"path": "/healthz", "port": 80})
    )
    wait_for(lambda: is_ready(read(core, namespace, "web")), what="Ready")

    assert make_unready(kube_api_client, namespace, "web") == {
        "unready": f"{namespace}/web",
        "containers": ["web"],
    }

    p = wait_for(lambda: not is_ready(p := read(core, namespace, "web")) and p, what="not Ready")
    (status,) = p.status.container_statuses
    assert status.state.running and status.started is True and status.ready is False
    assert p.status.phase == "Running" and status.restart_count == 0
    for type_ in ("Ready", "ContainersReady"):
        cond = condition(p, type_)
        assert (cond.status, cond.reason, cond.message) == (
            "False",
            "ContainersNotReady",
            "containers with unready status: [web]",
        )

    def unhealthy() -> list[client.CoreV1Event]:
        return [e for e in events_for(core, namespace, "web") if e.reason == "Unhealthy"]

    # The probe fails each periodSeconds; the recorder counts the repeats on one Event.
    (event,) = wait_for(lambda: (found := unhealthy()) and found[0].count >= 2 and found,
                        what="an Unhealthy Event counted twice")  # fmt: skip
    assert event.type == "Warning"
    assert event.message == "Readiness probe failed: HTTP probe failed with statuscode: 503"
    assert event.source.component == "kubelet" and event.source.host == p.spec.node_name
    assert event.involved_object.field_path == "spec.containers{web}"

    make_ready(kube_api_client, namespace, "web")

    wait_for(lambda: is_ready(read(core, namespace, "web")), what="Ready again")


def test_one_container_of_a_pod_can_be_unready_with_the_probe_output_given(
    cluster, core, namespace, kube_api_client
):
    body = probed_pod("duo", tcpSocket={"port": "http"})
    body["spec"]["containers"].append({"name": "side", "image": "busybox:1.36"})
    core.create_namespaced_pod(namespace, body)
    wait_for(lambda: is_ready(read(core, namespace, "duo")), what="Ready")

    make_unready(kube_api_client, namespace, "duo", container="side", message="not yet")
    make_unready(kube_api_client, namespace, "duo", container="web")

    # Each make_unready is a status update of its own: the pod may be read between the two.
    both = "containers with unready status: [web side]"
    p = wait_for(lambda: condition(p := read(core, namespace, "duo"), "Ready").message == both
                 and p, what="not Ready for both containers")  # fmt: skip
    assert not is_ready(p)
    messages = wait_for(
        lambda: len(found := {e.message for e in events_for(core, namespace, "duo")
                              if e.reason == "Unhealthy"}) == 2 and found,
        what="an Unhealthy Event for each container",
    )  # fmt: skip
    # A tcpSocket probe's named port, resolved as the kubelet does, on the pod's IP.
    assert messages == {
        f"Readiness probe failed: dial tcp {p.status.pod_ip}:80: connect: connection refused",
        "Readiness probe failed: not yet",
    }
    with pytest.raises(client.ApiException) as refused:
        make_unready(kube_api_client, namespace, "duo", container="nope")
    assert refused.value.status == 400
