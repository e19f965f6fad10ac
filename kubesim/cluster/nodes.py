"""Nodes: registration, Lease heartbeats, NotReady, removal (the kubelet's and the node lifecycle controller's part)."""

from __future__ import annotations

import copy
import hashlib
import time

from kubesim.cluster import names
from kubesim.cluster.api import is_status_error
from kubesim.cluster.controller import Context, Controller, Key, Obj, Watch, node_ready
from kubesim.cluster.selectors import tolerates
from kubesim.cluster.workloads import set_condition

PREFIX = "kubesim-node-"
LEASE_NAMESPACE = "kube-node-lease"
KUBELET_VERSION = "v1.28.7"
UNREACHABLE = "node.kubernetes.io/unreachable"
UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
# The kubelet's nodeStatusReportFrequency: the node status is rewritten this often (seconds).
STATUS_REPORT = 300.0

_HEALTHY = (
    ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
)


def node_index(name: str) -> int:
    try:
        return int(name.removeprefix(PREFIX))
    except ValueError:
        return int(hashlib.sha256(name.encode()).hexdigest(), 16) % 200 + 50


def new_node(index: int) -> Obj:
    name = f"{PREFIX}{index}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "node-role.kubernetes.io/worker": "",
            },
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {
            "podCIDR": f"10.244.{index}.0/24",
            "podCIDRs": [f"10.244.{index}.0/24"],
            "providerID": f"kubesim://{name}",
        },
    }


def node_status(
    node: Obj, *, ready: bool, max_pods: int = 110, extended: dict[str, str] | None = None
) -> Obj:
    """`extended`: resources a device plugin advertises. Those already in the node's status
    (advertised through the API, as the Kubernetes docs show) are kept, as a kubelet does."""
    name, index = node["metadata"]["name"], node_index(node["metadata"]["name"])
    capacity = {"cpu": "4", "ephemeral-storage": "102400000Ki", "hugepages-2Mi": "0"}
    capacity |= {"memory": "8148340Ki", "pods": str(max_pods)}
    advertised = (node.get("status") or {}).get("capacity") or {}
    capacity |= {k: v for k, v in advertised.items() if is_extended_resource(k)}
    capacity |= extended or {}
    stamp = names.rfc3339()
    conditions = list(node.get("status", {}).get("conditions") or [])
    # The node controller marks a silent kubelet's conditions Unknown and keeps when it last
    # heard from it (nodelifecycle's tryUpdateNodeHealth): only a kubelet's report is a beat.
    heard = {c.get("type"): c.get("lastHeartbeatTime") for c in conditions}
    created = node["metadata"].get("creationTimestamp") or stamp

    def beat(type_: str) -> str:
        return stamp if ready else str(heard.get(type_) or created)

    for type_, reason, message in _HEALTHY:
        if ready:
            cond = {"type": type_, "status": "False", "reason": reason, "message": message}
        else:
            cond = {
                "type": type_,
                "status": "Unknown",
                "reason": "NodeStatusUnknown",
                "message": "Kubelet stopped posting node status.",
            }
        conditions = set_condition(
            conditions, {**cond, "lastHeartbeatTime": beat(type_)}, now=stamp
        )
    if ready:
        cond = {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
        }
    else:
        cond = {
            "type": "Ready",
            "status": "Unknown",
            "reason": "NodeStatusUnknown",
            "message": "Kubelet stopped posting node status.",
        }
    conditions = set_condition(conditions, {**cond, "lastHeartbeatTime": beat("Ready")}, now=stamp)
    uid = hashlib.sha256(name.encode()).hexdigest()
    return {
        "capacity": capacity,
        "allocatable": dict(capacity),
        "conditions": conditions,
        "addresses": [
            {"type": "InternalIP", "address": f"172.18.0.{index + 1}"},
            {"type": "Hostname", "address": name},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "architecture": "amd64",
            "bootID": uid[:8]
            + "-"
            + uid[8:12]
            + "-"
            + uid[12:16]
            + "-"
            + uid[16:20]
            + "-"
            + uid[20:32],
            "containerRuntimeVersion": "containerd://1.7.24",
            "kernelVersion": "6.1.0-kubesim",
            "kubeProxyVersion": KUBELET_VERSION,
            "kubeletVersion": KUBELET_VERSION,
            "machineID": uid[:32],
            "operatingSystem": "linux",
            "osImage": "Debian GNU/Linux 12 (bookworm)",
            "systemUUID": uid[32:64],
        },
    }


class NodeController(Controller[Key]):
    """Keys are ("", node name). Ready nodes renew their Lease every lease_interval."""

    name = "nodes"
    group = "kubelet"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.down: set[str] = set()
        self._reported: dict[str, float] = {}

    def watches(self) -> dict[str, Watch]:
        return {"nodes": self._node_changed}

    def _node_changed(self, old: Obj | None, new: Obj | None) -> None:
        if new is None and old is not None:
            self.enqueue(("", old["metadata"]["name"]))
        elif new is not None and cordoned(new) != (old is not None and cordoned(old)):
            self.enqueue(("", new["metadata"]["name"]))

    def resync(self) -> None:
        for node in self.ctx.cache.list("nodes"):
            if not node_ready(node) and node.get("status"):
                self.down.add(node["metadata"]["name"])
            self.enqueue(("", node["metadata"]["name"]))

    def ensure_nodes(self, count: int) -> None:
        existing = {n["metadata"]["name"] for n in self.ctx.cache.list("nodes")}
        for index in range(1, count + 1):
            if f"{PREFIX}{index}" not in existing:
                self.register(index)

    def register(self, index: int | None = None) -> Obj:
        if index is None:
            taken = {node_index(n["metadata"]["name"]) for n in self.ctx.cache.list("nodes")}
            index = next(i for i in range(1, 250) if i not in taken)
        try:
            node = self.ctx.api.create("nodes", new_node(index))
        except Exception as exc:
            if not is_status_error(exc, 409):
                raise
            node = self.ctx.api.store.get("nodes", None, f"{PREFIX}{index}")
        node = self._write_status(node, ready=True)
        self._announce(node, ready=True, starting=True)
        self.enqueue(("", node["metadata"]["name"]))
        return node

    def _announce(self, node: Obj, *, ready: bool, starting: bool = False) -> None:
        """The events a kubelet and the node controller post when a node starts or changes."""
        name, post = node["metadata"]["name"], self.ctx.events.normal
        if not ready:
            post(
                node, "NodeNotReady", f"Node {name} status is now: NodeNotReady", "node-controller"
            )
            return
        if starting:
            post(node, "Starting", "Starting kubelet.", "kubelet", host=name)
            for status in (
                "NodeHasSufficientMemory",
                "NodeHasNoDiskPressure",
                "NodeHasSufficientPID",
            ):
                post(node, status, f"Node {name} status is now: {status}", "kubelet", host=name)
        post(node, "NodeReady", f"Node {name} status is now: NodeReady", "kubelet", host=name)
        if starting:
            message = f"Node {name} event: Registered Node {name} in Controller"
            post(node, "RegisteredNode", message, "node-controller")

    def remove(self, name: str) -> None:
        self.ctx.api.delete("nodes", None, name)
        self.down.discard(name)
        self.enqueue(("", name))

    def set_ready(self, name: str, ready: bool) -> Obj:
        node = self.ctx.cache.get("nodes", None, name) or self.ctx.api.store.get(
            "nodes", None, name
        )
        (self.down.discard if ready else self.down.add)(name)
        node = self._write_status(node, ready=ready)
        self._set_taints(node, ready)
        self._announce(node, ready=ready)
        self.enqueue(("", name))
        return node

    def reconcile(self, key: Key) -> float | None:
        name = key[1]
        node = self.ctx.cache.get("nodes", None, name)
        if node is None:
            self._collect_orphans(name)
            return None
        self._sync_cordon(node)
        if name in self.down:
            self._mark_pods_not_ready(name)
            return self._evict(node)
        if time.monotonic() - self._reported.get(name, -STATUS_REPORT) >= STATUS_REPORT:
            self._write_status(node, ready=True)  # the periodic heartbeat in the conditions
        self._renew_lease(node)
        return self.ctx.options.lease_interval

    def _write_status(self, node: Obj, *, ready: bool) -> Obj:
        self._reported[node["metadata"]["name"]] = time.monotonic()
        body = copy.deepcopy(node)
        body["status"] = node_status(
            node,
            ready=ready,
            max_pods=self.ctx.options.max_pods,
            extended=self.ctx.options.node_resources,
        )
        return self.ctx.api.update("nodes", body, subresource="status")

    def _set_taints(self, node: Obj, ready: bool) -> None:
        taints = [
            t for t in node.get("spec", {}).get("taints") or [] if t.get("key") != UNREACHABLE
        ]
        if not ready:
            stamp = names.rfc3339()
            taints += [
                {"key": UNREACHABLE, "effect": "NoSchedule", "timeAdded": stamp},
                {"key": UNREACHABLE, "effect": "NoExecute", "timeAdded": stamp},
            ]
        if taints != (node.get("spec", {}).get("taints") or []):
            self.ctx.api.patch(
                "nodes", None, node["metadata"]["name"], {"spec": {"taints": taints or None}}
            )

    def _sync_cordon(self, node: Obj) -> None:
        """A cordoned node (spec.unschedulable) carries the unschedulable taint."""
        taints = node.get("spec", {}).get("taints") or []
        has = any(t.get("key") == UNSCHEDULABLE for t in taints)
        if has == cordoned(node):
            return
        if has:
            taints = [t for t in taints if t.get("key") != UNSCHEDULABLE]
        else:
            taints = [
                *taints,
                {"key": UNSCHEDULABLE, "effect": "NoSchedule", "timeAdded": names.rfc3339()},
            ]
        self.ctx.api.patch(
            "nodes", None, node["metadata"]["name"], {"spec": {"taints": taints or None}}
        )

    def _renew_lease(self, node: Obj) -> None:
        name = node["metadata"]["name"]
        renew = names.micro_time()
        try:
            self.ctx.api.store.patch(
                "leases.coordination.k8s.io", LEASE_NAMESPACE, name, {"spec": {"renewTime": renew}}
            )
        except Exception as exc:
            if not is_status_error(exc, 404):
                raise
            lease = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {
                    "name": name,
                    "namespace": LEASE_NAMESPACE,
                    "ownerReferences": [
                        {
                            "apiVersion": "v1",
                            "kind": "Node",
                            "name": name,
                            "uid": node["metadata"]["uid"],
                        }
                    ],
                },
                "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": renew},
            }
            self.ctx.api.store.create(
                "leases.coordination.k8s.io", lease, namespace=LEASE_NAMESPACE
            )

    def _mark_pods_not_ready(self, name: str) -> None:
        """MarkPodsNotReady: the kubelet is gone, so its pods stop counting as ready."""
        stamp = names.rfc3339()
        for pod in self.ctx.cache.pods_on(name):
            conditions = pod.get("status", {}).get("conditions") or []
            ready = next((c for c in conditions if c.get("type") == "Ready"), None)
            if ready is None or ready.get("status") == "False":
                continue
            body = copy.deepcopy(pod)
            body["status"]["conditions"] = [
                {**c, "status": "False", "lastTransitionTime": stamp}
                if c.get("type") == "Ready"
                else c
                for c in conditions
            ]
            try:
                self.ctx.api.update("pods", body, subresource="status")
            except Exception as exc:
                if not is_status_error(exc, 404):
                    raise

    def _evict(self, node: Obj) -> float | None:
        """Taint-based eviction: pods leave an unreachable node once their toleration runs out.

        Returns the seconds until the next pod is due.
        """
        taint = next(
            (
                t
                for t in node.get("spec", {}).get("taints") or []
                if t.get("key") == UNREACHABLE and t.get("effect") == "NoExecute"
            ),
            None,
        )
        added = names.parse_time(taint.get("timeAdded")) if taint else None
        if taint is None or added is None:
            return None
        elapsed = (names.now() - added).total_seconds()
        next_due = None
        for pod in self.ctx.cache.pods_on(node["metadata"]["name"]):
            if pod["metadata"].get("deletionTimestamp"):
                continue
            seconds = toleration_seconds(pod, taint)
            if seconds is None:
                continue  # tolerated for ever (DaemonSet pods)
            if seconds <= elapsed:
                meta = pod["metadata"]
                self.ctx.events.normal(
                    pod,
                    "TaintManagerEviction",
                    f"Marking for deletion Pod {meta['namespace']}/{meta['name']}",
                    "taint-controller",  # v1.29 renamed it taint-eviction-controller
                )
                self.ctx.api.delete("pods", meta["namespace"], meta["name"])
            else:
                left = seconds - elapsed
                next_due = left if next_due is None else min(next_due, left)
        return next_due

    def _collect_orphans(self, name: str) -> None:
        """PodGC: pods bound to a node that no longer exists are deleted at once."""
        for pod in self.ctx.cache.pods_on(name):
            meta = pod["metadata"]
            self.ctx.api.delete("pods", meta["namespace"], meta["name"], grace_period_seconds=0)


def toleration_seconds(pod: Obj, taint: Obj) -> float | None:
    """How long the pod may stay under a NoExecute taint: 0 if untolerated, None for ever."""
    matching = [t for t in pod.get("spec", {}).get("tolerations") or [] if tolerates([t], taint)]
    if not matching:
        return 0.0
    limits = [t.get("tolerationSeconds") for t in matching]
    if any(limit is None for limit in limits):
        return None
    return float(max(0, min(limits)))


def is_extended_resource(name: str) -> bool:
    """A domain-prefixed resource outside kubernetes.io (v1helper.IsExtendedResourceName)."""
    domain = name.split("/", 1)[0] if "/" in name else ""
    return bool(domain) and not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def cordoned(node: Obj) -> bool:
    return bool(node.get("spec", {}).get("unschedulable"))
