"""Scheduler and kubelet: binding, start-up, image pull failures, graceful deletion."""

from __future__ import annotations

import pytest
from kubernetes import client

from tests.kubesim.cluster.helpers import (
    condition,
    events_for,
    is_ready,
    pod,
    schedulable_nodes,
    wait_for,
)


def read(core: client.CoreV1Api, namespace: str, name: str) -> client.V1Pod:
    return core.read_namespaced_pod(name, namespace)


def waiting_reason(p: client.V1Pod) -> str | None:
    statuses = p.status.container_statuses or []
    return statuses[0].state.waiting.reason if statuses and statuses[0].state.waiting else None


def test_a_pod_is_scheduled_and_started_like_on_a_real_node(core, namespace):
    core.create_namespaced_pod(namespace, pod("web", image="nginx:1.25"))

    p = wait_for(
        lambda: (p := read(core, namespace, "web")).status.phase == "Running" and is_ready(p) and p,
        what="Running",
    )

    assert p.spec.node_name and p.status.host_ip and p.status.pod_ip and p.status.start_time
    for type_ in ("PodScheduled", "Initialized", "ContainersReady", "Ready"):
        assert condition(p, type_).status == "True"
    [cs] = p.status.container_statuses
    assert (cs.name, cs.ready, cs.started, cs.restart_count) == ("main", True, True, 0)
    assert cs.image.endswith("nginx:1.25") and cs.image_id and cs.container_id
    assert cs.state.running.started_at is not None
    reasons = wait_for(
        lambda: (
            (r := {e.reason for e in events_for(core, namespace, "web")})
            >= {"Scheduled", "Pulled", "Created", "Started"}
            and r
        ),
        what="kubelet events",
    )
    assert "Failed" not in reasons
    scheduled = next(e for e in events_for(core, namespace, "web") if e.reason == "Scheduled")
    assert scheduled.message == f"Successfully assigned {namespace}/web to {p.spec.node_name}"


def test_a_missing_image_ends_in_image_pull_back_off_and_never_ready(core, namespace):
    core.create_namespaced_pod(
        namespace, pod("broken", image="registry.k8s.io/pause:does-not-exist")
    )

    p = wait_for(
        lambda: waiting_reason(p := read(core, namespace, "broken")) == "ImagePullBackOff" and p,
        what="ImagePullBackOff",
    )

    assert p.status.phase == "Pending"
    assert not is_ready(p)
    assert p.status.container_statuses[0].ready is False
    # a kubelet records its Events apart from the status it writes: wait for them too
    events = wait_for(
        lambda: (
            (found := events_for(core, namespace, "broken"))
            and any(e.reason == "BackOff" for e in found)
            and found
        ),
        what="the BackOff event",
    )
    assert any(
        e.reason == "Failed" and e.type == "Warning" and e.message == "Error: ErrImagePull"
        for e in events
    )
    assert any(
        e.reason == "BackOff" and "registry.k8s.io/pause:does-not-exist" in e.message
        for e in events
    )


def test_a_pod_no_node_fits_stays_pending_as_unschedulable(core, namespace):
    core.create_namespaced_pod(
        namespace, pod("picky", nodeSelector={"kubesim.test/no-such-label": "x"})
    )

    cond = wait_for(
        lambda: condition(read(core, namespace, "picky"), "PodScheduled"),
        what="PodScheduled condition",
    )

    assert (cond.status, cond.reason) == ("False", "Unschedulable")
    assert "didn't match Pod's node affinity/selector" in cond.message
    p = read(core, namespace, "picky")
    assert p.spec.node_name is None and p.status.phase == "Pending"
    failed = wait_for(
        lambda: [e for e in events_for(core, namespace, "picky") if e.reason == "FailedScheduling"],
        what="event",
    )
    assert failed[0].type == "Warning" and failed[0].message == cond.message


def test_a_pod_asking_for_more_cpu_than_any_node_has_is_unschedulable(core, namespace):
    greedy = pod("greedy")
    greedy["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1000"}}
    core.create_namespaced_pod(namespace, greedy)

    cond = wait_for(
        lambda: condition(read(core, namespace, "greedy"), "PodScheduled"), what="PodScheduled"
    )

    assert (cond.status, cond.reason) == ("False", "Unschedulable")
    assert "Insufficient cpu" in cond.message


def test_node_selector_picks_the_node(core, namespace):
    node = schedulable_nodes(core)[0].metadata.name
    core.create_namespaced_pod(
        namespace, pod("pinned", nodeSelector={"kubernetes.io/hostname": node})
    )

    p = wait_for(
        lambda: (p := read(core, namespace, "pinned")).spec.node_name and p, what="binding"
    )

    assert p.spec.node_name == node


def test_a_node_pulls_an_image_once_unless_the_policy_is_always(core, namespace):
    # As the kubelet's image manager: "Pulling" only when it pulls; an image the node
    # holds is "already present" under IfNotPresent, pulled again under Always.
    node = schedulable_nodes(core)[0].metadata.name
    image = f"registry.k8s.io/pause:3.9-{namespace}"  # new to every node
    pinned = {"nodeSelector": {"kubernetes.io/hostname": node}}

    def started(name: str, **spec: object) -> dict[str, str]:
        core.create_namespaced_pod(namespace, pod(name, image=image, **pinned, **spec))
        wait_for(lambda: is_ready(read(core, namespace, name)), what=f"{name} ready")
        return wait_for(
            lambda: (
                (r := {e.reason: e.message for e in events_for(core, namespace, name)}).keys()
                >= {"Pulled", "Started"}
                and r
            ),
            what=f"{name}'s events",
        )

    first = started("first")
    again = started("again")
    always = started(
        "always",
        containers=[{"name": "main", "image": image, "imagePullPolicy": "Always"}],
    )

    assert first["Pulling"] == f'Pulling image "{image}"'
    assert first["Pulled"].startswith(f'Successfully pulled image "{image}"')
    assert "Pulling" not in again
    assert again["Pulled"] == f'Container image "{image}" already present on machine'
    assert "Pulling" in always and always["Pulled"].startswith("Successfully pulled")


def test_deleting_a_running_pod_marks_it_terminating_then_removes_it(core, namespace):
    core.create_namespaced_pod(namespace, pod("doomed"))
    wait_for(lambda: is_ready(read(core, namespace, "doomed")), what="Ready")

    deleted = core.delete_namespaced_pod("doomed", namespace)

    assert deleted.metadata.deletion_timestamp is not None
    assert deleted.metadata.deletion_grace_period_seconds == 5

    def gone() -> bool:
        try:
            read(core, namespace, "doomed")
        except client.ApiException as exc:
            return exc.status == 404
        return False

    wait_for(gone, what="the pod to go")


@pytest.mark.kubesim_only
def test_an_invalid_image_reference_is_invalid_image_name(core, namespace):
    core.create_namespaced_pod(namespace, pod("odd", image="Not A Valid:Reference"))

    p = wait_for(
        lambda: waiting_reason(p := read(core, namespace, "odd")) == "InvalidImageName" and p,
        what="InvalidImageName",
    )

    assert not is_ready(p) and p.status.phase == "Pending"
    assert any(e.reason == "InspectFailed" for e in events_for(core, namespace, "odd"))


def test_a_readiness_probe_delays_ready_but_not_running(core, namespace):
    probed = pod("probed", image="nginx:1.25")
    probed["spec"]["containers"][0]["readinessProbe"] = {
        "tcpSocket": {"port": 80},
        "initialDelaySeconds": 2,
        "periodSeconds": 1,
    }
    core.create_namespaced_pod(namespace, probed)

    running = wait_for(
        lambda: (p := read(core, namespace, "probed")).status.phase == "Running" and p,
        what="Running",
    )
    assert not is_ready(running)
    assert running.status.container_statuses[0].started is True

    wait_for(lambda: is_ready(read(core, namespace, "probed")), what="Ready after the probe delay")


def test_pods_get_five_minutes_on_a_node_that_stops_reporting_unless_they_say_otherwise(
    core, namespace
):
    """DefaultTolerationSeconds: a NoSchedule toleration of the taint does not count, a
    toleration of every key or every effect does."""
    unreachable = "node.kubernetes.io/unreachable"
    cases = {
        "plain": [],
        "noschedule": [{"key": unreachable, "operator": "Exists", "effect": "NoSchedule"}],
        "everything": [{"operator": "Exists"}],
        "every-effect": [{"key": unreachable, "operator": "Exists"}],
    }
    added = {}
    for name, tolerations in cases.items():
        created = core.create_namespaced_pod(
            namespace, pod(name, tolerations=tolerations), dry_run="All"
        )
        added[name] = {
            (t.key, t.effect, t.toleration_seconds)
            for t in created.spec.tolerations
            if t.to_dict() not in [client.V1Toleration(**c).to_dict() for c in tolerations]
        }

    both = {
        ("node.kubernetes.io/not-ready", "NoExecute", 300),
        (unreachable, "NoExecute", 300),
    }
    assert added == {
        "plain": both,
        "noschedule": both,
        "everything": set(),
        "every-effect": {("node.kubernetes.io/not-ready", "NoExecute", 300)},
    }
