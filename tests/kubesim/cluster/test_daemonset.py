"""The DaemonSet controller: one pod per matching node."""

from __future__ import annotations

from tests.kubesim.cluster.helpers import schedulable_nodes, wait_for


def daemonset(name: str, **pod_spec: object) -> dict:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "agent", "image": "busybox:1.36"}], **pod_spec},
            },
        },
    }


def test_one_ready_pod_on_every_node(apps, core, namespace):
    nodes = {n.metadata.name for n in schedulable_nodes(core)}
    apps.create_namespaced_daemon_set(namespace, daemonset("agent"))

    def status():
        s = apps.read_namespaced_daemon_set("agent", namespace).status
        return s if s.number_ready == len(nodes) and s.observed_generation else None

    s = wait_for(status, what="a ready pod per node")

    assert (s.desired_number_scheduled, s.current_number_scheduled) == (len(nodes), len(nodes))
    assert (s.updated_number_scheduled, s.number_available, s.number_misscheduled) == (
        len(nodes),
        len(nodes),
        0,
    )
    pods = core.list_namespaced_pod(namespace, label_selector="app=agent").items
    assert sorted(p.spec.node_name for p in pods) == sorted(nodes)


def test_node_selector_limits_the_nodes(apps, core, namespace):
    node = schedulable_nodes(core)[0].metadata.name
    apps.create_namespaced_daemon_set(
        namespace, daemonset("one", nodeSelector={"kubernetes.io/hostname": node})
    )

    s = wait_for(
        lambda: (
            (s := apps.read_namespaced_daemon_set("one", namespace).status).number_ready == 1 and s
        ),
        what="one ready pod",
    )

    assert s.desired_number_scheduled == 1
    [p] = core.list_namespaced_pod(namespace, label_selector="app=one").items
    assert p.spec.node_name == node


def test_a_template_change_replaces_the_pods(apps, core, namespace):
    nodes = len(schedulable_nodes(core))
    apps.create_namespaced_daemon_set(namespace, daemonset("roll"))
    wait_for(
        lambda: apps.read_namespaced_daemon_set("roll", namespace).status.number_ready == nodes,
        what="ready",
    )

    patch = {
        "spec": {"template": {"spec": {"containers": [{"name": "agent", "image": "busybox:1.37"}]}}}
    }
    apps.patch_namespaced_daemon_set("roll", namespace, patch)

    def updated() -> bool:
        ds = apps.read_namespaced_daemon_set("roll", namespace)
        s = ds.status
        pods = core.list_namespaced_pod(namespace, label_selector="app=roll").items
        images = {p.spec.containers[0].image for p in pods}
        return (
            s.observed_generation == ds.metadata.generation
            and s.updated_number_scheduled == nodes
            and s.number_ready == nodes
            and images == {"busybox:1.37"}
        )

    wait_for(updated, what="every daemon pod updated")
