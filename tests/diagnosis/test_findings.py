"""The diagnosis rules on plain data: each finding names the cause and what to do."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from controllers.base import CrFields
from controllers.conditions import find_condition
from controllers.graces import Graces
from controllers.memcached.status import compute_status as memcached_status
from controllers.refusals import REFUSAL_FRESH_SECONDS, short_of_pods
from controllers.unready import UNREADY_GRACE_SECONDS
from opsboard.diagnosis.findings import CONTROLLER_GRACE_SECONDS, diagnose
from opsboard.diagnosis.observed import EngineState, ImageChange, LastRun, Observed, Section
from tests.controllers.builders import memcached

NOW = datetime(2026, 11, 23, 17, 0, tzinfo=UTC)
LIVE = EngineState(watcher_leader="w1", workers=("host:1",))


def _cr(**status: Any) -> dict[str, Any]:
    return {
        "kind": "Memcached",
        "metadata": {"name": "cache", "namespace": "shop", "generation": 2, "uid": "u1"},
        "spec": {"size": 2, "image": "memcached:nope"},
        "status": {"observedGeneration": 2, **status},
    }


def _pod(
    name: str, *, waiting: str = "", image: str = "memcached:nope", **extra: Any
) -> dict[str, Any]:
    statuses = [{"name": "memcached", "image": f"docker.io/library/{image}",
                 "state": {"waiting": {"reason": waiting}} if waiting else {"running": {}}}]  # fmt: skip
    status: dict[str, Any] = {"containerStatuses": statuses, **extra}
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {"containers": [{"name": "memcached", "image": image}]},
        "status": status,
    }


MEMCACHED_FIELDS = CrFields(resources=(("memcached", "spec.resources"),))


def _codes(observed: Observed) -> list[str]:
    return [f.code for f in diagnose(observed)]


def test_image_pull_backoff_names_the_image_and_the_audit_entry_that_set_it() -> None:
    pods = [_pod("cache-1", waiting="ImagePullBackOff"), _pod("cache-2", waiting="ErrImagePull")]
    change = ImageChange(7, "memcached:nope", "otto", NOW - timedelta(minutes=3))
    older = ImageChange(3, "memcached:1.6", "otto", NOW - timedelta(hours=3))
    findings = diagnose(
        Observed(_cr(), objects=pods, image_changes=[change, older], engine=LIVE, now=NOW)
    )
    first = findings[0]
    assert first.code == "ImagePullBackOff"
    assert "2 pods cannot pull image memcached:nope" in first.what
    assert "change #7 of the audit (otto, 3 min ago)" in first.what
    assert first.todo == "Set an image that exists, or revert change #7."
    assert first.see == Section.HISTORY  # each page says where that is, in its own words


def test_an_image_nobody_set_through_opsboard_names_no_audit_entry() -> None:
    findings = diagnose(
        Observed(_cr(), objects=[_pod("c", waiting="ImagePullBackOff")], engine=LIVE, now=NOW)
    )
    assert "audit" not in findings[0].what and "exists" in findings[0].todo


def test_an_image_pull_names_the_crs_field_that_sets_that_containers_image() -> None:
    """A BookStore's mongodb image is spec.bookDB.image, the app's spec.bookApp.image; a
    container whose image the CR does not hold (a sidecar a webhook added) names neither."""
    cr = {"kind": "BookStore", "metadata": {"name": "shop", "namespace": "shop", "uid": "u2"},
          "spec": {"bookApp": {"image": "shop/app:1"}, "bookDB": {"image": "mongo:nope"}}}  # fmt: skip

    def todo(container: str, image: str) -> str:
        pod = _pod("shop-db-0", waiting="ErrImagePull", image=image)
        pod["spec"]["containers"][0]["name"] = pod["status"]["containerStatuses"][0]["name"] = (
            container
        )
        observed = Observed(
            cr, objects=[pod], engine=LIVE, now=NOW, fields=CrFields(
                image="spec.bookApp.image", images=(("mongodb", "spec.bookDB.image"),)),
        )  # fmt: skip
        return diagnose(observed)[0].todo

    assert todo("mongodb", "mongo:nope") == (
        "Set spec.bookDB.image to an image that exists (check the name and tag), or give the "
        "pods a pull secret."
    )
    assert todo("bookstore", "shop/app:1").startswith("Set spec.bookApp.image to an image ")
    assert todo("proxy", "proxy:nope").startswith("Set an image that exists (check")


def test_an_unschedulable_pod_says_no_node_matches_the_selector() -> None:
    message = "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."
    pod = _pod("p-1", conditions=[
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
    ])  # fmt: skip
    pod["status"]["containerStatuses"] = []
    pod["spec"]["nodeSelector"] = {"hw": "accel"}
    finding = diagnose(Observed(_cr(), objects=[pod], engine=LIVE, now=NOW))[0]
    assert finding.code == "Unschedulable"
    assert "no node matches the node selector hw=accel" in finding.what and message in finding.what
    assert finding.todo == "Label a node to match (hw=accel) or change the CR's node selector."
    # Where the CR has a field for it, the advice names it (and the page links its form).
    observed = Observed(_cr(), objects=[pod], engine=LIVE, now=NOW,
                        fields=CrFields(node_selector="spec.nodeSelector"))  # fmt: skip
    assert diagnose(observed)[0].todo.endswith(
        "or change the CR's node selector, spec.nodeSelector."
    )


def test_not_enough_of_a_device_names_the_resource() -> None:
    message = "0/3 nodes are available: 3 Insufficient example.com/accel."
    pod = _pod("p-1", conditions=[
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
    ])  # fmt: skip
    finding = diagnose(Observed(_cr(), objects=[pod], engine=LIVE, now=NOW))[0]
    assert "not enough example.com/accel" in finding.what


def test_not_enough_memory_for_what_the_cr_requests_names_its_field() -> None:
    message = "0/3 nodes are available: 3 Insufficient memory."
    pod = _pod("p-1", conditions=[
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
    ])  # fmt: skip
    pod["spec"]["containers"][0]["resources"] = {"requests": {"memory": "64Gi"}}
    observed = Observed(_cr(), objects=[pod], engine=LIVE, now=NOW, fields=MEMCACHED_FIELDS)
    [finding] = diagnose(observed)
    assert "not enough memory: each pod requests 64Gi memory" in finding.what
    assert finding.todo == (
        "Lower spec.resources.requests (what each pod requests), or free memory on the nodes, "
        "or add nodes."
    )


def _consumer_pod(message: str, *, accel: str = "3") -> dict[str, Any]:
    """A Ptemplate's consumer pod as kubesim's DaemonSet makes it: pinned to one node."""
    pod = _pod("pt-consumer-x7k2p", conditions=[
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
    ])  # fmt: skip
    pod["status"]["containerStatuses"] = []
    pod["metadata"]["ownerReferences"] = [
        {"kind": "DaemonSet", "name": "pt-consumer", "controller": True, "uid": "ds"}
    ]
    wanted = {"example.com/accel": accel}
    pod["spec"]["containers"][0]["resources"] = {"limits": wanted, "requests": wanted}
    pod["spec"]["nodeSelector"] = {"hwe.example.com/accel": "yes"}
    return pod


def test_a_pod_short_of_a_device_on_the_one_node_that_matches_names_the_shortage() -> None:
    message = ("0/3 nodes are available: 1 Insufficient example.com/accel, 2 node(s) didn't "
               "match Pod's node affinity/selector.")  # fmt: skip
    daemonset = {
        "kind": "DaemonSet",
        "metadata": {"name": "pt-consumer", "namespace": "shop", "generation": 2},
        "spec": {"template": {"spec": {"nodeSelector": {"hwe.example.com/accel": "yes"}}}},
        "status": {"observedGeneration": 2, "desiredNumberScheduled": 1},
    }
    objects = [daemonset, _consumer_pod(message)]
    [finding] = diagnose(Observed(_cr(), objects=objects, engine=LIVE, now=NOW))
    assert finding.code == "Unschedulable"
    assert "no node matches" not in finding.what and "Label a node" not in finding.todo
    assert "not enough example.com/accel: each pod requests 3 example.com/accel" in finding.what
    assert "the 1 node(s) it may run on" in finding.what and message in finding.what
    assert "Lower what each pod requests" in finding.todo
    assert "add example.com/accel to the nodes" in finding.todo


def _oom_killed(limit: str | None = None, *, by_limit_range: bool = False) -> dict[str, Any]:
    pod = _pod("c-1", waiting="CrashLoopBackOff")
    pod["status"]["containerStatuses"][0].update(
        restartCount=3, lastState={"terminated": {"reason": "OOMKilled", "exitCode": 137}}
    )
    if limit:
        pod["spec"]["containers"][0]["resources"] = {"limits": {"memory": limit}}
    if by_limit_range:
        said = (
            "LimitRanger plugin set: cpu, memory request for container memcached; "
            "cpu, memory limit for container memcached"
        )
        pod["metadata"]["annotations"] = {"kubernetes.io/limit-ranger": said}
    return pod


def test_a_container_killed_at_a_limit_range_default_says_raise_it_and_remake_the_pods() -> None:
    """The operators' pods state no memory: a limit they hit is a LimitRange's, which a pod
    takes when it is made, so the crashing ones must be made again."""
    pod = _oom_killed("64Mi", by_limit_range=True)
    finding = diagnose(Observed(_cr(), objects=[pod], engine=LIVE, now=NOW))[0]
    assert finding.code == "CrashLoopBackOff"
    assert "(last exit: OOMKilled, code 137)" in finding.what
    assert finding.todo.startswith(
        "It used more than its memory limit 64Mi, a LimitRange's default "
        "(kubectl -n shop get limitrange): raise that default, then delete the crashing pods"
    )
    assert finding.todo.endswith("kubectl logs -n shop c-1 -c memcached --previous")


def test_a_container_killed_with_no_limit_of_its_own_is_the_nodes_memory() -> None:
    unlimited = diagnose(Observed(_cr(), objects=[_oom_killed()], engine=LIVE, now=NOW))[0]
    assert unlimited.todo.startswith("Its node ran out of memory")
    assert "defaultRequest for memory" in unlimited.todo
    elsewhere = diagnose(Observed(_cr(), objects=[_oom_killed("1Gi")], engine=LIVE, now=NOW))[0]
    assert elsewhere.todo.startswith("It used more than its memory limit 1Gi: raise the limit")
    assert "LimitRange" not in elsewhere.todo
    asked = _oom_killed()
    asked["spec"]["containers"][0]["resources"] = {"requests": {"memory": "100Mi"}}
    [finding] = diagnose(Observed(_cr(), objects=[asked], engine=LIVE, now=NOW))
    assert "more than its memory request 100Mi: raise the request" in finding.todo
    cpu_only = _oom_killed("1Gi")
    cpu_only["metadata"]["annotations"] = {
        "kubernetes.io/limit-ranger": "LimitRanger plugin set: cpu limit for container memcached"
    }
    [finding] = diagnose(Observed(_cr(), objects=[cpu_only], engine=LIVE, now=NOW))
    assert "LimitRange" not in finding.todo


def _oom_advice(pod: dict[str, Any], cr: dict[str, Any] | None = None) -> str:
    observed = Observed(cr or _cr(), objects=[pod], engine=LIVE, now=NOW, fields=MEMCACHED_FIELDS)
    [finding] = diagnose(observed)
    return finding.todo


def test_out_of_memory_advice_names_the_crs_field_with_the_command_that_sets_it() -> None:
    patch = "kubectl -n shop patch memcached cache --type merge -p"
    assert _oom_advice(_oom_killed("64Mi", by_limit_range=True)).startswith(
        "It used more than its memory limit 64Mi, a LimitRange's default (kubectl -n shop get "
        "limitrange): give it one of its own, set spec.resources.limits.memory, e.g. to 128Mi "
        f"""({patch} '{{"spec":{{"resources":{{"limits":{{"memory":"128Mi"}}}}}}}}'); or raise """
        "that default, then delete the crashing pods so that new ones take it."
    )
    cr = _cr()
    cr["spec"]["resources"] = {"limits": {"memory": "1Gi"}}
    assert _oom_advice(_oom_killed("1Gi"), cr).startswith(
        "It used more than its memory limit 1Gi: raise spec.resources.limits.memory, e.g. to "
        f"""2Gi ({patch} '{{"spec":{{"resources":{{"limits":{{"memory":"2Gi"}}}}}}}}')."""
    )
    # A limit the CR does not set (someone's hand on the Deployment) is not the CR's to raise.
    assert _oom_advice(_oom_killed("1Gi")).startswith(
        "It used more than its memory limit 1Gi: raise the limit where it is set."
    )
    assert _oom_advice(_oom_killed()).startswith(
        "Its node ran out of memory: the pod states no memory request, so the scheduler cannot "
        "keep it off full nodes. Set spec.resources.requests.memory, e.g. to 256Mi ("
    )
    asked = _oom_killed()
    asked["spec"]["containers"][0]["resources"] = {"requests": {"memory": "100M"}}
    assert _oom_advice(asked).startswith(
        "Its node ran out of memory while it used more than its memory request 100M: raise "
        "spec.resources.requests.memory, e.g. to 191Mi ("
    )


def test_a_selector_some_nodes_match_is_not_said_to_match_none() -> None:
    """The node the selector allows has a taint: that is the cause to name."""
    message = ("0/3 nodes are available: 1 node(s) had untolerated taint {gpu: only}, 2 node(s) "
               "didn't match Pod's node affinity/selector.")  # fmt: skip
    [finding] = diagnose(Observed(_cr(), objects=[_consumer_pod(message)], engine=LIVE, now=NOW))
    assert "no node matches" not in finding.what and "Label a node" not in finding.todo
    assert (
        "every node is ruled out: 2 nodes not matching its node selector, 1 node tainted "
        "gpu=only, which the pods do not tolerate, e.g." in finding.what
    )
    assert finding.todo == (
        "On the nodes that should run them: remove the taint gpu=only (kubectl taint nodes "
        "NODE gpu-); or add nodes that may take them."
    )


# As kube-apiserver v1.28's scheduler wrote it on the rig (one node cordoned, the others
# tainted), and kubesim's the same.
KEPT_OFF = (
    "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) had untolerated taint "
    "{example.com/maintenance: yes}. preemption: 0/3 nodes are available: 3 Preemption is not "
    "helpful for scheduling.."
)


@pytest.mark.parametrize(
    ("message", "what", "todo"),
    [
        (KEPT_OFF,
         "every node is ruled out: 1 node cordoned, 2 nodes tainted example.com/maintenance=yes, "
         "which the pods do not tolerate",
         "On the nodes that should run them: uncordon them (kubectl uncordon NODE; kubectl get "
         "nodes shows them SchedulingDisabled); remove the taint example.com/maintenance=yes "
         "(kubectl taint nodes NODE example.com/maintenance-); or add nodes that may take them."),
        # A taint with no value (the control plane's), and two taints.
        ("0/2 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/"
         "control-plane: }, 1 node(s) had untolerated taint {a: b}. preemption: ...",
         "every node is ruled out: 1 node tainted node-role.kubernetes.io/control-plane, 1 node "
         "tainted a=b, taints the pods do not tolerate",
         "(kubectl taint nodes NODE node-role.kubernetes.io/control-plane-); remove the taint "
         "a=b (kubectl taint nodes NODE a-); or add"),
        ("0/3 nodes are available: 3 node(s) were unschedulable.",
         "every node is ruled out: 3 nodes cordoned, e.g.", "uncordon them (kubectl uncordon"),
        # Another reason among them: a resource is named, an unknown one left to the message.
        ("0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable.",
         "not enough cpu", "free cpu on the nodes, or add nodes."),
        ("0/3 nodes are available: 1 node(s) had volume node affinity conflict, 2 node(s) "
         "were unschedulable.", "the scheduler can place them nowhere",
         "Read the scheduler's message"),
    ],
)  # fmt: skip
def test_nodes_cordoned_or_tainted_are_told_with_the_commands_that_let_pods_on(
    message: str, what: str, todo: str
) -> None:
    [finding] = diagnose(Observed(_cr(), objects=[_consumer_pod(message)], engine=LIVE, now=NOW))
    assert finding.code == "Unschedulable"
    assert what in finding.what and message in finding.what
    assert todo in finding.todo


def test_a_crash_loop_names_the_container_and_the_logs_command() -> None:
    pod = _pod("c-1", waiting="CrashLoopBackOff")
    pod["status"]["containerStatuses"][0].update(
        restartCount=4, lastState={"terminated": {"reason": "Error", "exitCode": 1}}
    )
    finding = diagnose(Observed(_cr(), objects=[pod], engine=LIVE, now=NOW))[0]
    assert "4 restarts" in finding.what and "code 1" in finding.what
    assert "kubectl logs -n shop c-1 -c memcached --previous" in finding.todo


def _stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _unready(name: str, *, running_for: float, unready_for: float | None = None,
             probe: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """A pod as a kubelet reports it while its readiness probe fails: running and started,
    not ready; `unready_for` (default: since it started) dates its Ready condition."""
    started = NOW - timedelta(seconds=running_for)
    flipped = NOW - timedelta(seconds=running_for if unready_for is None else unready_for)
    message = "containers with unready status: [memcached]"
    pod = _pod(name, image="memcached:1.6", phase="Running", conditions=[
        {"type": "Ready", "status": "False", "reason": "ContainersNotReady",
         "message": message, "lastTransitionTime": _stamp(flipped)},
        {"type": "ContainersReady", "status": "False", "reason": "ContainersNotReady",
         "message": message, "lastTransitionTime": _stamp(flipped)},
    ])  # fmt: skip
    pod["status"]["containerStatuses"][0] |= {
        "ready": False, "started": True, "state": {"running": {"startedAt": _stamp(started)}}
    }  # fmt: skip
    if probe:
        pod["spec"]["containers"][0]["readinessProbe"] = probe
    return pod


def test_pods_running_but_never_ready_name_the_pod_the_container_and_its_probe() -> None:
    probe = {"httpGet": {"path": "/healthz", "port": 11211}, "periodSeconds": 10}
    pods = [_unready("cache-1", running_for=180, probe=probe),
            _unready("cache-2", running_for=200, probe=probe), _pod("cache-3", image="memcached:1.6")]  # fmt: skip
    [finding] = diagnose(Observed(_cr(), objects=pods, engine=LIVE, now=NOW))
    assert finding.code == "NotReady" and finding.subject == "Pod cache-1"
    assert finding.what == (
        "Not ready: 2 pods running but not ready for 3 min, e.g. cache-1: container memcached "
        "fails its readiness probe (GET :11211/healthz)."
    )
    assert finding.todo == (
        "Read why the probe fails in the pod's Events (kubectl -n shop describe pod cache-1), "
        "then check what its readiness probe GET :11211/healthz asks of container memcached "
        "and why it does not answer (kubectl -n shop logs cache-1 -c memcached)."
    )
    assert finding.see == Section.TREE


def test_a_pod_ready_for_long_that_stops_being_ready_is_named_once_past_the_grace() -> None:
    pod = _unready("cache-1", running_for=3600, unready_for=UNREADY_GRACE_SECONDS + 5)
    [finding] = diagnose(Observed(_cr(), objects=[pod], engine=LIVE, now=NOW))
    assert "not ready for 35 s" in finding.what
    # Its spec names no probe: the advice says how to read the one it has.
    assert "kubectl -n shop get pod cache-1 -o jsonpath='{.spec.containers[?(@.name==\"memcached\")].readinessProbe}'" in finding.todo  # fmt: skip


def test_pods_within_the_grace_are_still_starting_and_not_counted() -> None:
    starting = _unready("cache-1", running_for=UNREADY_GRACE_SECONDS - 5)
    blip = _unready("cache-2", running_for=3600, unready_for=UNREADY_GRACE_SECONDS - 5)
    stuck = _unready("cache-3", running_for=600)
    observed = Observed(_cr(), objects=[starting, blip, stuck], engine=LIVE, now=NOW)
    [finding] = diagnose(observed)
    assert finding.what.startswith(
        "Not ready: 1 pod running but not ready for 10 min, e.g. cache-3:"
    )


def test_crash_looping_stopped_and_deleted_pods_are_left_to_other_rules() -> None:
    crashing = _unready("cache-1", running_for=600)
    crashing["spec"]["containers"].append({"name": "sidecar", "image": "busybox"})
    crashing["status"]["containerStatuses"].append(
        {"name": "sidecar", "ready": False, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
    )
    stopped = _unready("cache-2", running_for=600)
    stopped["status"]["containerStatuses"][0] |= {
        "started": False, "state": {"terminated": {"reason": "Error", "exitCode": 1}}
    }  # fmt: skip
    deleting = _unready("cache-3", running_for=600)
    deleting["metadata"]["deletionTimestamp"] = _stamp(NOW)
    objects = [crashing, stopped, deleting, _unready("cache-4", running_for=600)]
    findings = diagnose(Observed(_cr(), objects=objects, engine=LIVE, now=NOW))
    assert [f.code for f in findings] == ["CrashLoopBackOff", "NotReady"]
    assert "1 pod running but not ready" in findings[1].what
    assert findings[1].subject == "Pod cache-4"


def test_a_rollout_past_its_deadline_is_explained_by_its_unready_pods() -> None:
    deployment = {"kind": "Deployment", "metadata": {"name": "cache", "namespace": "shop"},
                  "spec": {}, "status": {"conditions": [{"type": "Progressing", "status": "False",
                  "reason": "ProgressDeadlineExceeded", "message": "ReplicaSet x has timed out"}]}}  # fmt: skip
    objects = [deployment, _unready("cache-1", running_for=900)]
    findings = diagnose(Observed(_cr(), objects=objects, engine=LIVE, now=NOW))
    assert [f.code for f in findings] == ["NotReady", "ProgressDeadlineExceeded"]
    assert findings[1].todo.startswith("Fix what keeps its new pods from becoming ready (above)")


def _lost(name: str, *, node: str = "node-2", owner: tuple[str, str] = ("ReplicaSet", "cache-5d8"),
          not_ready_for: float = 120, tolerate: int | None = 300) -> dict[str, Any]:  # fmt: skip
    """A pod whose node stopped reporting, as v1.28.7 leaves it (seen on a real control
    plane): Running, Ready False with no reason (the node lifecycle controller's
    MarkPodsNotReady), ContainersReady and the containers still ready (the kubelet's last
    word), the unreachable toleration the DefaultTolerationSeconds admission added."""
    flipped = _stamp(NOW - timedelta(seconds=not_ready_for))
    pod = _pod(name, image="memcached:1.6", phase="Running", conditions=[
        {"type": "Ready", "status": "False", "lastProbeTime": None, "lastTransitionTime": flipped},
        {"type": "ContainersReady", "status": "True", "lastTransitionTime": _stamp(NOW - timedelta(hours=1))},
    ])  # fmt: skip
    pod["status"]["containerStatuses"][0] |= {"ready": True, "started": True}
    pod["spec"] |= {"nodeName": node, "tolerations": [
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         **({"tolerationSeconds": tolerate} if tolerate is not None else {})}]}  # fmt: skip
    pod["metadata"]["ownerReferences"] = [
        {"kind": owner[0], "name": owner[1], "controller": True, "uid": f"{owner[1]}-uid"}
    ]
    return pod


_REPLICASET = {"kind": "ReplicaSet", "metadata": {"name": "cache-5d8", "namespace": "shop",
               "ownerReferences": [{"kind": "Deployment", "name": "cache", "controller": True}]}}  # fmt: skip


def test_pods_on_a_node_that_stopped_reporting_name_it_and_what_kubernetes_does_next() -> None:
    pods = [_lost("cache-5d8-a"), _lost("cache-5d8-b", not_ready_for=100)]
    gated = _lost("cache-5d8-c")  # a readiness gate the kubelet says is not ready: not this
    gated["status"]["conditions"][0] |= {"reason": "ReadinessGatesNotReady"}
    objects = [_REPLICASET, *pods, gated, _pod("cache-5d8-d", image="memcached:1.6")]
    [finding] = diagnose(Observed(_cr(), objects=objects, engine=LIVE, now=NOW))
    assert finding.code == "NodeLost" and finding.subject == "Node node-2"
    assert finding.what == (
        "Node node-2 stopped reporting (its kubelet is down or the node is lost): 2 pods on it "
        "not ready for 2 min (cache-5d8-a, cache-5d8-b). Kubernetes evicts them after their "
        "toleration of an unreachable node (300 s), in about 3 min, and Deployment cache "
        "starts replacements on another node."
    )
    assert finding.todo == (
        "See why node node-2 stopped reporting (kubectl describe node node-2) and bring the "
        "node or its kubelet back."
    )
    # To a reader with roles in some namespaces only, the node is a cluster administrator's.
    [theirs] = diagnose(Observed(_cr(), objects=objects, engine=LIVE, now=NOW, node_rights=False))
    assert theirs.todo == finding.todo + (
        " Nodes are outside your namespaces: ask a cluster administrator to take the steps on them."
    )


def _node_ready(status: str, heard: datetime, **said: str) -> dict[str, Any]:
    ready = {"type": "Ready", "status": status, "lastHeartbeatTime": _stamp(heard), **said}
    return {"kind": "Node", "metadata": {"name": "node-2"}, "status": {"conditions": [ready]}}


def test_a_lost_node_mirrored_says_when_it_was_last_heard_from_or_what_its_kubelet_says() -> None:
    objects = [_REPLICASET, _lost("cache-5d8-a")]
    silent = _node_ready("Unknown", NOW - timedelta(minutes=5), reason="NodeStatusUnknown",
                         message="Kubelet stopped posting node status.")  # fmt: skip
    [finding] = diagnose(Observed(_cr(), objects=objects, nodes=[silent], engine=LIVE, now=NOW))
    assert finding.what.startswith(
        "Node node-2 stopped reporting (its kubelet is down or the node is lost, last heard "
        "from 5 min ago): 1 pod on it not ready for 2 min (cache-5d8-a)."
    )
    # A kubelet that reports the node not ready has not stopped reporting: it says why.
    network = ("container runtime network not ready: NetworkReady=false "
               "reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin "
               "not initialized")  # fmt: skip
    unwell = _node_ready("False", NOW, reason="KubeletNotReady", message=network)
    [finding] = diagnose(Observed(_cr(), objects=objects, nodes=[unwell], engine=LIVE, now=NOW))
    assert finding.what.startswith(
        f"Node node-2 is not ready, its kubelet says (KubeletNotReady: {network}): 1 pod on it "
    )
    assert finding.todo == (
        "Fix what the kubelet of node node-2 reports (kubectl describe node node-2 shows its "
        "conditions and events)."
    )
    # Its pods are evicted by the not-ready taint, after their toleration of that one.
    assert "Kubernetes evicts it after its toleration of a node not ready (0 s)" in finding.what
    lost = _lost("cache-5d8-a")
    lost["spec"]["tolerations"].append({"key": "node.kubernetes.io/not-ready", "operator":
                                        "Exists", "effect": "NoExecute", "tolerationSeconds": 600})  # fmt: skip
    [finding] = diagnose(Observed(_cr(), objects=[_REPLICASET, lost], nodes=[unwell], engine=LIVE,
                                  now=NOW))  # fmt: skip
    assert "after its toleration of a node not ready (600 s), in about 8 min" in finding.what


def test_a_statefulset_pod_on_a_lost_node_waits_for_it_even_once_evicted() -> None:
    pod = _lost("db-0", owner=("StatefulSet", "db"), not_ready_for=400)
    pod["metadata"]["deletionTimestamp"] = _stamp(NOW - timedelta(seconds=100))
    [finding] = diagnose(Observed(_cr(), objects=[pod], engine=LIVE, now=NOW))
    assert finding.what.endswith(
        "1 pod on it not ready for 6 min (db-0). Kubernetes has evicted it, but no kubelet is "
        "there to stop it; StatefulSet db does not replace db-0 until it is gone: until node "
        "node-2 is back or it is deleted by force."
    )
    assert finding.todo.endswith(
        "bring the node or its kubelet back. If the node is gone for good, make sure it is "
        "really down (a pod deleted by force while it still runs there would run twice), then: "
        "kubectl -n shop delete pod db-0 --force --grace-period=0"
    )


def test_each_lost_node_is_named_with_what_its_pods_owners_do() -> None:
    daemon = _lost("agent-x", node="node-3", owner=("DaemonSet", "agent"), tolerate=None)
    db = _lost("db-0", owner=("StatefulSet", "db"), not_ready_for=400)
    web = _lost("cache-5d8-a", tolerate=30, not_ready_for=60)
    objects = [_REPLICASET, daemon, db, web]
    findings = diagnose(Observed(_cr(), objects=objects, engine=LIVE, now=NOW))
    assert [f.subject for f in findings] == ["Node node-2", "Node node-3"]
    assert findings[0].what.endswith(
        "2 pods on it not ready for 6 min (db-0, cache-5d8-a). Kubernetes evicts it after its "
        "toleration of an unreachable node (300 s), any moment now; StatefulSet db does not "
        "replace db-0 until it is gone: until node node-2 is back or it is deleted by force. "
        "Kubernetes evicts it after its toleration of an unreachable node (30 s), any moment "
        "now, and Deployment cache starts a replacement on another node."
    )
    assert "delete pod db-0 --force --grace-period=0" in findings[0].todo
    assert findings[1].what.endswith(
        "(agent-x). DaemonSet agent's pod stays there until node node-3 is back: no other "
        "node runs it in its place."
    )
    assert "--force" not in findings[1].todo


def test_a_rollout_past_its_deadline_is_explained_by_its_pods_on_a_lost_node() -> None:
    deployment = {"kind": "Deployment", "metadata": {"name": "cache", "namespace": "shop"},
                  "spec": {}, "status": {"conditions": [{"type": "Progressing", "status": "False",
                  "reason": "ProgressDeadlineExceeded", "message": "ReplicaSet x has timed out"}]}}  # fmt: skip
    objects = [deployment, _REPLICASET, _lost("cache-5d8-a", not_ready_for=900)]
    findings = diagnose(Observed(_cr(), objects=objects, engine=LIVE, now=NOW))
    assert [f.code for f in findings] == ["NodeLost", "ProgressDeadlineExceeded"]
    assert findings[1].todo.startswith("Fix what keeps its new pods from becoming ready (above)")


def test_a_forbidden_last_run_comes_first_and_backoff_says_when_the_retry_is_due() -> None:
    error = (
        'PATCH /apis/apps/v1/namespaces/shop/deployments/cache: 403 forbidden: User "system:'
        'serviceaccount:opsboard:opsboard-operator" cannot patch resource "deployments" in API '
        'group "apps"'
    )
    engine = EngineState(watcher_leader="w", workers=("h:1",), failures=3,
                         next_retry_at=NOW + timedelta(seconds=40))  # fmt: skip
    observed = Observed(
        _cr(), objects=[_pod("c", waiting="ImagePullBackOff")], engine=engine, now=NOW,
        last_run=LastRun("error", error, NOW - timedelta(seconds=5)),
    )  # fmt: skip
    findings = diagnose(observed)
    assert [f.code for f in findings] == ["Forbidden", "ImagePullBackOff", "Backoff"]
    assert "3 failure(s) in a row" in findings[-1].what and "in 40 s" in findings[-1].what


def test_a_refused_change_says_only_that_it_waits_for_the_object_to_change() -> None:
    error = ("dbSize 1Gi is smaller than the claims data-shop-db-0 (5Gi); Kubernetes cannot "
             "shrink a PersistentVolumeClaim: set it to 5Gi or more")  # fmt: skip
    run = LastRun("permanent", error, NOW - timedelta(seconds=5))
    [finding] = diagnose(Observed(_cr(), last_run=run, engine=LIVE, now=NOW))
    assert "retries" not in finding.todo
    assert finding.todo.endswith(
        "it is not retried until the object changes or someone presses Reconcile now."
    )
    retried = LastRun("error", error, NOW - timedelta(seconds=5))
    [finding] = diagnose(Observed(_cr(), last_run=retried, engine=LIVE, now=NOW))
    assert "the engine retries with backoff" in finding.todo and "not retried" not in finding.todo


def test_the_engine_down_is_named_first() -> None:
    engine = EngineState(last_watcher="old-watcher", last_watcher_at=NOW - timedelta(minutes=5))
    findings = diagnose(Observed(_cr(), engine=engine, now=NOW))
    assert [f.code for f in findings][:2] == ["NoWatcher", "NoWorker"]
    assert "old-watcher, was seen 5 min ago" in findings[0].what


def test_a_key_waiting_longer_than_the_stale_limit_is_named() -> None:
    engine = EngineState(watcher_leader="w", workers=("h:1",), stale_after=60,
                         queued_since=NOW - timedelta(seconds=90))  # fmt: skip
    assert "WaitingTooLong" in _codes(Observed(_cr(), engine=engine, now=NOW))
    engine = EngineState(watcher_leader="w", workers=("h:1",), stale_after=60,
                         queued_since=NOW - timedelta(seconds=30))  # fmt: skip
    assert "WaitingTooLong" not in _codes(Observed(_cr(), engine=engine, now=NOW))


def test_a_foreign_child_and_a_missing_one() -> None:
    foreign = {
        "kind": "Deployment",
        "metadata": {"name": "cache", "ownerReferences": [
            {"kind": "WebServer", "name": "cache", "controller": True, "uid": "other"}
        ]},
    }  # fmt: skip
    observed = Observed(
        _cr(), missing=[("Deployment", "cache"), ("Service", "cache")], foreign=[foreign],
        engine=LIVE, now=NOW,
    )  # fmt: skip
    findings = diagnose(observed)
    assert [f.code for f in findings] == ["ForeignChild", "MissingChild"]
    assert "controlled by WebServer cache" in findings[0].what
    assert findings[1].what == "Service cache is missing."


def test_a_child_whose_creation_was_refused_is_told_once_by_the_refusal() -> None:
    """Not also "missing: the next reconcile creates it", which it will not until the grant
    or the quota changes."""
    quota = (
        'POST /api/v1/namespaces/shop/services: 403 services "cache" is forbidden: exceeded '
        "quota: q, requested: services.nodeports=1, used: services.nodeports=0, limited: "
        "services.nodeports=0"
    )
    rbac = (
        "POST /apis/apps/v1/namespaces/shop/deployments: 403 deployments.apps is forbidden: "
        'User "system:serviceaccount:opsboard:opsboard-operator" cannot create resource '
        '"deployments" in API group "apps" in the namespace "shop"'
    )
    missing = [("Deployment", "cache"), ("Service", "cache")]
    for error, still_missing in ((quota, "Deployment cache"), (rbac, "Service cache")):
        observed = Observed(
            _cr(), missing=missing, engine=LIVE, now=NOW,
            last_run=LastRun("error", error, NOW - timedelta(seconds=5)),
        )  # fmt: skip
        findings = diagnose(observed)
        assert findings[0].code == "Forbidden"
        told = [f.subject for f in findings if f.code == "MissingChild"]
        assert told == [still_missing], told


def test_a_finalizer_blocking_deletion_names_who_removes_it() -> None:
    cr = _cr()
    # The API server raised the generation as it marked the CR deleting: no stale status.
    cr["metadata"].update(deletionTimestamp="2026-11-23T16:00:00Z", generation=3,
                          finalizers=["cache.example.com/cleanup", "other.io/hold"])  # fmt: skip
    findings = diagnose(
        Observed(cr, engine=LIVE, now=NOW, running_controllers=("cache.example.com",))
    )
    assert [f.code for f in findings] == ["BlockingFinalizer", "BlockingFinalizer"]
    assert "an opsboard controller, which is running" in findings[0].what
    assert "a controller opsboard does not run" in findings[1].what
    assert "kubectl patch -n shop memcached cache --type=merge" in findings[0].todo


def test_a_rollout_past_its_deadline_and_a_claim_waiting_for_a_resize() -> None:
    deployment = {"kind": "Deployment", "metadata": {"name": "cache"}, "spec": {},
                  "status": {"conditions": [{"type": "Progressing", "status": "False",
                  "reason": "ProgressDeadlineExceeded", "message": "ReplicaSet x has timed out"}]}}  # fmt: skip
    claim = {"kind": "PersistentVolumeClaim", "metadata": {"name": "data-db-0"},
             "spec": {"resources": {"requests": {"storage": "2Gi"}}},
             "status": {"phase": "Bound", "capacity": {"storage": "1Gi"},
                        "conditions": [{"type": "FileSystemResizePending", "status": "True"}]}}  # fmt: skip
    findings = diagnose(Observed(_cr(), objects=[deployment, claim], engine=LIVE, now=NOW))
    assert [f.code for f in findings] == ["ClaimResizing", "ProgressDeadlineExceeded"]
    assert "1Gi of 2Gi" in findings[0].what and "Restart the pod" in findings[0].todo


def _resizing(name: str) -> dict[str, Any]:
    return {"kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "shop"},
            "spec": {"resources": {"requests": {"storage": "5Gi"}}},
            "status": {"phase": "Bound", "capacity": {"storage": "2Gi"},
                       "conditions": [{"type": "FileSystemResizePending", "status": "True"}]}}  # fmt: skip


def _mounting(name: str, claim: str, owner: str) -> dict[str, Any]:
    pod = _pod(name)
    pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    pod["metadata"]["ownerReferences"] = [
        {"kind": owner, "name": name.rsplit("-", 1)[0], "controller": True, "uid": "o"}
    ]
    return pod


def test_a_claim_waiting_for_its_file_system_names_the_pod_and_the_restart_command() -> None:
    objects = [_resizing("data-db-0"), _mounting("db-0", "data-db-0", "StatefulSet"),
               _mounting("db-1", "data-db-1", "StatefulSet")]  # fmt: skip
    [finding] = diagnose(Observed(_cr(), objects=objects, engine=LIVE, now=NOW))
    assert "Restart pod db-0, which mounts it" in finding.todo and "db-1" not in finding.todo
    assert "kubectl -n shop rollout restart statefulset db" in finding.todo
    objects = [_resizing("data"), _mounting("web-5d9f-x2b4k", "data", "ReplicaSet")]
    [finding] = diagnose(Observed(_cr(), objects=objects, engine=LIVE, now=NOW))
    assert "kubectl -n shop delete pod web-5d9f-x2b4k" in finding.todo


def test_a_healthy_cr_has_no_finding_and_a_degraded_one_falls_back_to_its_condition() -> None:
    assert diagnose(Observed(_cr(), engine=LIVE, now=NOW)) == []
    degraded = _cr(conditions=[{"type": "Degraded", "status": "True", "reason": "InvalidSpec",
                                "message": "spec.image: Invalid value"}])  # fmt: skip
    findings = diagnose(Observed(degraded, engine=LIVE, now=NOW))
    assert [f.code for f in findings] == ["InvalidSpec"]


def test_a_daemonset_that_selects_no_node_names_its_selector() -> None:
    daemonset = {
        "kind": "DaemonSet",
        "metadata": {"name": "pt-consumer", "generation": 1},
        "spec": {"template": {"spec": {"nodeSelector": {"hw": "accel"}}}},
        "status": {"observedGeneration": 1, "desiredNumberScheduled": 0},
    }
    finding = diagnose(Observed(_cr(), objects=[daemonset], engine=LIVE, now=NOW))[0]
    assert finding.code == "NoMatchingNodes"
    assert "DaemonSet pt-consumer runs no pod: no node matches its node selector hw=accel" in (
        finding.what
    )
    assert "kubectl label node NODE hw=accel" in finding.todo
    # Its controller leaves out tainted nodes too: the page says so, as nothing tells them apart.
    assert ", or each one that does has a taint its pods do not tolerate (0 nodes selected)." in (
        finding.what
    )
    observed = Observed(_cr(), objects=[daemonset], engine=LIVE, now=NOW,
                        fields=CrFields(node_selector="spec.nodeSelector"))  # fmt: skip
    assert diagnose(observed)[0].todo == (
        "Label the nodes that should run it (kubectl label node NODE hw=accel), or change the "
        "CR's node selector, spec.nodeSelector. If nodes have it (kubectl get nodes -l "
        "hw=accel), remove the taint that keeps its pods off them (kubectl describe node NODE "
        "shows its taints)."
    )
    # kubectl label takes the labels apart; kubectl get -l, a selector, with commas.
    daemonset["spec"]["template"]["spec"]["nodeSelector"] = {"hw": "accel", "zone": "a"}
    assert (
        "(kubectl label node NODE hw=accel zone=a), or change the CR's node selector, "
        "spec.nodeSelector. If nodes have them (kubectl get nodes -l hw=accel,zone=a)"
        in diagnose(observed)[0].todo
    )
    daemonset["status"]["observedGeneration"] = 0  # not counted yet: nothing to say
    assert diagnose(Observed(_cr(), objects=[daemonset], engine=LIVE, now=NOW)) == []


REFUSED = ('pods "cache-5d9f-x2b4k" is forbidden: exceeded quota: q, requested: pods=1, '
           "used: pods=1, limited: pods=1")  # fmt: skip


def _failing(kind: str, name: str, message: str = REFUSED) -> dict[str, Any]:
    failure = {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
               "message": message}  # fmt: skip
    return {"kind": kind, "metadata": {"name": name, "namespace": "shop"}, "spec": {},
            "status": {"conditions": [failure]}}  # fmt: skip


def test_pods_refused_by_a_quota_name_the_quota_and_come_before_the_stuck_rollout() -> None:
    deployment = _failing("Deployment", "cache")
    deployment["status"]["conditions"].append({"type": "Progressing", "status": "False",
        "reason": "ProgressDeadlineExceeded", "message": 'ReplicaSet "cache-5d9f" has timed out'})  # fmt: skip
    objects = [deployment, _failing("ReplicaSet", "cache-5d9f")]
    findings = diagnose(Observed(_cr(), objects=objects, engine=LIVE, now=NOW))
    assert [f.code for f in findings] == ["ReplicaFailure", "ProgressDeadlineExceeded"]
    refused = findings[0]
    assert refused.subject == "ReplicaSet cache-5d9f"
    assert refused.what.endswith(f"(FailedCreate): {REFUSED}")
    assert "Raise ResourceQuota q (kubectl -n shop describe resourcequota q)" in refused.todo
    assert "(above)" in findings[1].todo


def test_pods_refused_by_anything_else_say_where_to_look() -> None:
    message = (  # the ServiceAccount admission's
        'pods "cache-5d9f-x" is forbidden: error looking up service account shop/builder: '
        'serviceaccount "builder" not found'
    )
    findings = diagnose(
        Observed(_cr(), objects=[_failing("Deployment", "cache", message)], engine=LIVE, now=NOW)
    )
    assert findings[0].subject == "Deployment cache" and message in findings[0].what
    assert "PodSecurity admission or an admission webhook" in findings[0].todo
    assert "kubectl -n shop get events --field-selector reason=FailedCreate" in findings[0].todo


def test_a_cleared_replica_failure_is_no_finding() -> None:
    replica_set = _failing("ReplicaSet", "cache-5d9f")
    replica_set["status"]["conditions"][0]["status"] = "False"
    assert diagnose(Observed(_cr(), objects=[replica_set], engine=LIVE, now=NOW)) == []


def _short_statefulset(replicas: int = 2, created: int = 1) -> dict[str, Any]:
    return {"kind": "StatefulSet", "metadata": {"name": "db", "namespace": "shop", "uid": "u-db"},
            "spec": {"replicas": replicas}, "status": {"replicas": created}}  # fmt: skip


def _failed_create(seconds_ago: int, message: str) -> dict[str, Any]:
    at = (NOW - timedelta(seconds=seconds_ago)).isoformat()
    return {"kind": "Event", "reason": "FailedCreate", "type": "Warning", "lastTimestamp": at,
            "involvedObject": {"kind": "StatefulSet", "name": "db", "uid": "u-db"},
            "message": message}  # fmt: skip


STS_REFUSED = f"create Pod db-1 in StatefulSet db failed error: {REFUSED}"


def test_a_statefulset_short_of_pods_is_explained_by_its_newest_recent_refusal() -> None:
    refusals = [_failed_create(500, "create Pod db-1 ... older"), _failed_create(30, STS_REFUSED)]
    observed = Observed(_cr(), objects=[_short_statefulset()], refusals=refusals, engine=LIVE,
                        now=NOW)  # fmt: skip
    [finding] = diagnose(observed)
    assert (finding.code, finding.subject) == ("FailedCreate", "StatefulSet db")
    assert finding.what.endswith(f"(FailedCreate, last 30 s ago): {STS_REFUSED}")
    assert "Raise ResourceQuota q (kubectl -n shop describe resourcequota q)" in finding.todo


def test_a_statefulset_refusal_counts_only_while_recent_and_while_pods_are_missing() -> None:
    stale = [_failed_create(REFUSAL_FRESH_SECONDS + 60, STS_REFUSED)]
    assert diagnose(Observed(_cr(), objects=[_short_statefulset()], refusals=stale,
                             engine=LIVE, now=NOW)) == []  # fmt: skip
    fresh = [_failed_create(30, STS_REFUSED)]
    assert diagnose(Observed(_cr(), objects=[_short_statefulset(created=2)], refusals=fresh,
                             engine=LIVE, now=NOW)) == []  # fmt: skip


def test_short_of_pods_by_the_workloads_own_counts() -> None:
    assert short_of_pods(_short_statefulset(replicas=2, created=1))
    assert not short_of_pods(_short_statefulset(replicas=0, created=0))
    assert short_of_pods({"kind": "StatefulSet", "spec": {}, "status": {}})  # replicas: 1
    daemonset = {"kind": "DaemonSet", "status": {"desiredNumberScheduled": 3,
                                                 "currentNumberScheduled": 1}}  # fmt: skip
    assert short_of_pods(daemonset)
    assert not short_of_pods({**daemonset, "status": {"desiredNumberScheduled": 3,
                                                      "currentNumberScheduled": 3}})  # fmt: skip
    assert not short_of_pods(_failing("Deployment", "cache"))


def test_an_aggregated_daemonset_refusal_is_shown_without_the_correlators_prefix() -> None:
    daemonset = {"kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "shop",
                 "uid": "u-ds"}, "spec": {}, "status": {"desiredNumberScheduled": 3,
                 "currentNumberScheduled": 1}}  # fmt: skip
    message = 'Error creating: pods "agent-x2b4k" is forbidden: exceeded quota: q'
    event = {**_failed_create(10, f"(combined from similar events): {message}"),
             "involvedObject": {"kind": "DaemonSet", "name": "agent", "uid": "u-ds"}}  # fmt: skip
    [finding] = diagnose(Observed(_cr(), objects=[daemonset], refusals=[event], engine=LIVE,
                                  now=NOW))  # fmt: skip
    assert finding.subject == "DaemonSet agent"
    assert finding.what.endswith(f"last 10 s ago): {message}")
    # A Ptemplate's DaemonSet: no size to lower, but what each pod requests.
    ptemplate = Observed({**_cr(), "kind": "Ptemplate"}, objects=[daemonset], refusals=[event],
                         engine=LIVE, now=NOW, fields=CrFields(requests="spec.deviceCount"))  # fmt: skip
    assert "or lower the CR's spec.deviceCount;" in diagnose(ptemplate)[0].todo


def test_a_stuck_rollout_with_no_cause_found_says_where_to_look_not_above() -> None:
    deployment = {"kind": "Deployment", "metadata": {"name": "cache", "namespace": "shop"},
                  "spec": {}, "status": {"conditions": [{"type": "Progressing", "status": "False",
                  "reason": "ProgressDeadlineExceeded", "message": "timed out"}]}}  # fmt: skip
    [finding] = diagnose(Observed(_cr(), objects=[deployment], engine=LIVE, now=NOW))
    assert "(above)" not in finding.todo
    assert "kubectl -n shop describe deployment cache" in finding.todo


def test_redis_down_says_what_to_check_without_assuming_make_run() -> None:
    [finding] = diagnose(Observed(_cr(), engine=EngineState(redis_up=False), now=NOW))
    assert finding.code == "RedisDown"
    assert "REDIS_URL" in finding.todo and "make run" not in finding.todo


def test_live_standbys_with_no_leader_say_none_can_lead_and_why_not_start_a_watcher() -> None:
    error = "GET /apis/coordination.k8s.io/v1/namespaces/ops/leases/opsboard-watcher: refused"
    engine = EngineState(workers=("h:1",), standbys=1, lease_error=error,
                         last_watcher="w2", last_watcher_at=NOW)  # fmt: skip
    [finding] = diagnose(Observed(_cr(), engine=engine, now=NOW))
    assert finding.code == "NoLeader"
    assert "1 watcher(s) running, but none can take the leader Lease" in finding.what
    assert error in finding.what
    assert "API server" in finding.todo and "Start the watcher" not in finding.todo


def test_a_stale_status_says_a_reconcile_is_queued_only_when_the_key_is() -> None:
    cr = _cr()
    cr["metadata"]["generation"] = 3

    def stale(engine: EngineState) -> str:
        [finding] = [f for f in diagnose(Observed(cr, engine=engine, now=NOW))
                     if f.code == "StatusStale"]  # fmt: skip
        return finding.what

    assert "No reconcile is queued for it." in stale(LIVE)
    queued = EngineState(watcher_leader="w1", workers=("h:1",), queued_since=NOW)
    assert "A reconcile is queued." in stale(queued)
    running = EngineState(watcher_leader="w1", workers=("h:1",), running_since=NOW)
    assert "A reconcile is running." in stale(running)
    assert "queued" not in stale(EngineState(redis_up=False))


def test_a_ptemplates_pods_short_of_a_device_say_to_lower_spec_device_count() -> None:
    message = "0/3 nodes are available: 3 Insufficient example.com/accel."
    cr = {**_cr(), "kind": "Ptemplate"}
    found = Observed(cr, objects=[_consumer_pod(message)], engine=LIVE, now=NOW,
                     fields=CrFields(requests="spec.deviceCount"))  # fmt: skip
    [finding] = diagnose(found)
    assert finding.todo.startswith("Lower spec.deviceCount (what each pod requests), or add")
    assert "size" not in finding.todo
    sized = Observed(_cr(), objects=[_consumer_pod(message)], engine=LIVE, now=NOW,
                     fields=CrFields(size="spec.size"))  # fmt: skip
    assert "(or the CR's spec.size)" in diagnose(sized)[0].todo


def _stale(engine: EngineState, **observed: Any) -> tuple[str, str]:
    cr = _cr()
    cr["metadata"]["generation"] = 3
    [finding] = [f for f in diagnose(Observed(cr, engine=engine, now=NOW, **observed))
                 if f.code == "StatusStale"]  # fmt: skip
    return finding.what, finding.todo


def test_a_spec_changed_a_moment_ago_is_being_picked_up_not_for_a_person_to_act_on() -> None:
    what, todo = _stale(LIVE, changed_at=NOW - timedelta(seconds=1))
    assert "The change is being picked up." in what and "No reconcile is queued" not in what
    assert "Press Reconcile now" not in todo
    what, todo = _stale(LIVE, changed_at=NOW - timedelta(minutes=5))  # lost, not late
    assert "No reconcile is queued for it." in what and "Press Reconcile now" in todo


def test_a_stale_status_waiting_for_a_backoff_retry_says_when_it_is_due() -> None:
    backoff = EngineState(watcher_leader="w1", workers=("h:1",), failures=4,
                          next_retry_at=NOW + timedelta(seconds=9))  # fmt: skip
    what, todo = _stale(backoff)
    assert "The next retry is due in 9 s (17:00:09 UTC)." in what
    assert "No reconcile is queued" not in what and "Fix the error above" in todo
    permanent = EngineState(watcher_leader="w1", workers=("h:1",), permanent=True)
    what, todo = _stale(permanent)
    assert "not retried until the object changes" in what and "Fix the error above" in todo


def _deployment(name: str, **meta: Any) -> dict[str, Any]:
    return {"kind": "Deployment", "metadata": {"name": name, "namespace": "shop", **meta}}


def test_a_child_made_outside_opsboard_is_not_called_missing() -> None:
    found = Observed(_cr(), missing=[("Deployment", "cache")], unowned=[_deployment("cache")],
                     engine=LIVE, now=NOW)  # fmt: skip
    [finding] = diagnose(found)
    assert finding.code == "UnownedChild" and finding.subject == "Deployment cache"
    assert "exists but was not created by opsboard" in finding.what
    assert "the next reconcile adopts it" in finding.what


SELECTOR_REFUSED = (
    'PATCH /apis/apps/v1/namespaces/shop/deployments/cache: 422 Deployment.apps "cache" is '
    "invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"
    '"app":"cache"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable'
)


def test_an_unowned_child_whose_adoption_is_refused_gets_one_finding_saying_what_to_do() -> None:
    found = Observed(
        _cr(), missing=[("Deployment", "cache")], unowned=[_deployment("cache")],
        last_run=LastRun("permanent", SELECTOR_REFUSED, NOW), engine=LIVE, now=NOW,
    )  # fmt: skip
    [finding] = diagnose(found)
    assert (finding.code, finding.subject) == ("Invalid", "Deployment cache")
    assert finding.what.startswith(
        "Deployment cache already exists and was not created by opsboard (it has no owner). "
        "opsboard adopts such a Deployment, but cannot change its spec.selector, which is "
        "immutable."
    )
    assert finding.todo == (
        "Delete it (kubectl -n shop delete deployment cache): opsboard then creates its own. "
        "Or rename this Memcached."
    )


def test_a_nodeport_in_use_names_the_service_holding_it_and_the_crs_field() -> None:
    text = ("POST /api/v1/namespaces/shop/services: 422 Service \"web-service\" is invalid: "
            "spec.ports[0].nodePort: Invalid value: 32361: provided port is already allocated")  # fmt: skip
    cr = {**_cr(), "kind": "WebServer", "spec": {"replicas": 1, "nodePort": 32361}}
    found = Observed(cr, last_run=LastRun("error", text, NOW), engine=LIVE, now=NOW,
                     port_users={32361: "Service shop/other"})  # fmt: skip
    [finding] = diagnose(found)
    assert finding.code == "PortTaken" and finding.subject == "Service web-service"
    assert finding.what.startswith(
        "NodePort 32361 is already in use by Service shop/other, so Service web-service cannot "
        "get it."
    )
    assert finding.todo == (
        "Set another spec.nodePort, or remove it to let the cluster choose one. Or free the "
        "port: the engine retries at least every 60 s and succeeds once it is free."
    )


def _workload(kind: str, generation: int, observed: int | None) -> dict[str, Any]:
    status = {} if observed is None else {"observedGeneration": observed}
    meta = {"name": "cache", "namespace": "shop", "uid": f"{kind}-uid", "generation": generation}
    return {"kind": kind, "metadata": meta, "status": status}


def test_a_workload_its_controller_leaves_unobserved_says_the_cluster_is_not_acting() -> None:
    quiet = NOW - timedelta(seconds=CONTROLLER_GRACE_SECONDS + 30)
    deployment = _workload("Deployment", 3, 2)
    found = Observed(_cr(), objects=[deployment], objects_changed_at={"Deployment-uid": quiet},
                     engine=LIVE, now=NOW)  # fmt: skip
    [finding] = diagnose(found)
    assert (finding.code, finding.subject) == ("NotObserved", "Deployment cache")
    assert finding.what == (
        "Deployment cache is at generation 3 and its status describes generation 2: the "
        "cluster's deployment controller has not acted on it for 90 s."
    )
    assert "kube-controller-manager" in finding.todo
    new = _workload("StatefulSet", 1, None)  # never seen by its controller at all
    found = Observed(_cr(), objects=[new], objects_changed_at={"StatefulSet-uid": quiet},
                     engine=LIVE, now=NOW)  # fmt: skip
    assert "it has no status: the cluster's statefulset controller" in diagnose(found)[0].what


def test_a_workload_changed_a_moment_ago_or_observed_is_no_finding() -> None:
    recent = {"Deployment-uid": NOW - timedelta(seconds=CONTROLLER_GRACE_SECONDS - 10)}
    quiet = {"Deployment-uid": NOW - timedelta(hours=1)}
    for workload, changed in ((_workload("Deployment", 3, 2), recent),
                              (_workload("Deployment", 3, 3), quiet)):  # fmt: skip
        found = Observed(_cr(), objects=[workload], objects_changed_at=changed, engine=LIVE,
                         now=NOW)  # fmt: skip
        assert diagnose(found) == []


@pytest.mark.parametrize("grace", [UNREADY_GRACE_SECONDS, 90.0])
def test_the_crs_status_and_the_diagnosis_tell_unready_pods_alike(grace: float) -> None:
    """One rule (controllers.unready) for both, with the grace the settings give: the pod the
    diagnosis names is the one the CR is Degraded for, and one still within the grace is
    neither named nor Degraded."""
    cases = [
        (_unready("cache-1", running_for=3600, unready_for=grace - 1), [], "AsExpected"),
        (_unready("cache-1", running_for=3600, unready_for=grace + 1), ["NotReady"],
         "ReadinessFailing"),
        (_lost("cache-5d8-a"), ["NodeLost"], "NodeLost"),
    ]  # fmt: skip
    for pod, codes, reason in cases:
        cr = memcached(size=1, image="memcached:1.6")
        status = memcached_status(cr, pods=[pod], now=_stamp(NOW), graces=Graces(unready=grace))
        degraded = find_condition(status["conditions"], "Degraded") or {}
        observed = Observed(_cr(), objects=[pod], engine=LIVE, now=NOW, unready_grace=grace)
        findings = diagnose(observed)
        assert ([f.code for f in findings], degraded.get("reason")) == (codes, reason)


@pytest.mark.parametrize(
    ("reason", "said", "todo"),
    [
        # kubelet v1.28's words (kuberuntime), and what to change for each.
        ("CreateContainerConfigError", 'secret "db-pass" not found',
         "Create the Secret db-pass in namespace shop (the pods refer to it), or remove the "
         "reference; the kubelet starts them once it is there."),
        ("CreateContainerConfigError", 'configmap "tuning" not found',
         "Create the ConfigMap tuning in namespace shop"),
        ("CreateContainerConfigError", 'container has runAsNonRoot and image will run as root '
         '(pod: "cache-1_shop(0c1f)", container: memcached)',
         "The pods ask for runAsNonRoot and the image runs as root: use an image that runs as a "
         "non-root user, or give the pods a non-root runAsUser"),
        ("RunContainerError", 'failed to create containerd task: failed to create shim task: '
         'OCI runtime create failed: runc create failed: unable to start container process: '
         'exec: "memcachedx": executable file not found in $PATH: unknown',
         "The container runtime cannot create or start it: the kubelet's message says why (a "
         "command the image does not have, a mount it refuses). kubectl describe pod -n shop "
         "cache-1 shows its Events."),
        ("ErrImageNeverPull", 'Container image "memcached:local" is not present with pull '
         "policy of Never", "The pods' imagePullPolicy is Never and the image is not on the node"),
    ],
)  # fmt: skip
def test_a_container_the_kubelet_cannot_start_is_told_in_its_words_with_what_to_change(
    reason: str, said: str, todo: str
) -> None:
    pods = [_pod("cache-1", waiting=reason), _pod("cache-2", waiting=reason)]
    for pod in pods:
        pod["status"]["containerStatuses"][0]["state"]["waiting"]["message"] = said
    [finding] = diagnose(Observed(_cr(), objects=pods, engine=LIVE, now=NOW))
    assert finding.code == reason and finding.subject == "Pod cache-1"
    assert finding.what == (
        f"2 pods cannot start container memcached ({reason}), e.g. cache-1: {said}"
    )
    assert todo in finding.todo
