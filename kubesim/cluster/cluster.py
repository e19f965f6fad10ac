"""The simulated cluster: kube-controller-manager, scheduler and kubelets on top of the store.

The Cluster subscribes to the store, keeps a cache of the kinds it acts on, and
routes every change to the controllers that care, through one work queue. It
writes only through the store API, so each change it makes is a normal watch
event for clients.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Hashable
from typing import Any

from kubesim.cluster import control
from kubesim.cluster.api import Api, is_status_error
from kubesim.cluster.cache import Cache
from kubesim.cluster.controller import ClusterOptions, Context, Controller, Obj, Watch
from kubesim.cluster.daemonset import DaemonSetController
from kubesim.cluster.deployment import DeploymentController
from kubesim.cluster.disruption import BUDGETS, DisruptionController
from kubesim.cluster.endpoints import EndpointsController
from kubesim.cluster.events import Recorder
from kubesim.cluster.eventttl import EventExpiry
from kubesim.cluster.kubelet import Kubelet
from kubesim.cluster.limitranges import LimitRanger
from kubesim.cluster.nodes import NodeController
from kubesim.cluster.podsecurity import PodSecurityAdmission
from kubesim.cluster.quota import QuotaAdmission, ResourceQuotaController
from kubesim.cluster.replicaset import ReplicaSetController
from kubesim.cluster.scheduler import Scheduler
from kubesim.cluster.services import ServiceAllocator
from kubesim.cluster.statefulset import StatefulSetController
from kubesim.cluster.tokens import TokenVolumeAdmission
from kubesim.cluster.volumes import ClaimAdmission, VolumeController
from kubesim.cluster.webhooks import WebhookAdmission
from kubesim.cluster.workqueue import WorkQueue

RESOURCES = [
    "nodes",
    "pods",
    "services",
    "endpoints",
    "endpointslices.discovery.k8s.io",
    "persistentvolumeclaims",
    "persistentvolumes",
    "deployments.apps",
    "replicasets.apps",
    "statefulsets.apps",
    "daemonsets.apps",
    "controllerrevisions.apps",
    "resourcequotas",
    BUDGETS,
]
GROUPS = ("controllers", "kubelet")


class Cluster:
    def __init__(
        self, store: Any, options: Any = None, *, give_way: Callable[[], None] = lambda: None
    ) -> None:
        """`give_way`, called before each work item, lets the server's requests go first."""
        self.store = store
        self.options = ClusterOptions.coerce(options)
        self.cache = Cache(RESOURCES)
        self.queue = WorkQueue(self._handle, self._group_of, give_way)
        # The worker and the fault API both take this lock, so a fault lands between reconciles.
        self.lock = threading.RLock()
        self.ctx = Context(
            api=Api(store, self.cache),
            cache=self.cache,
            queue=self.queue,
            events=Recorder(store, self.options.event_ttl),
            options=self.options,
            seed=self.options.seed,
            jitter=random.Random(self.options.seed),
            ties=random.Random(self.options.seed),
        )
        self.nodes = NodeController(self.ctx)
        self.volumes = VolumeController(self.ctx)
        self.kubelet = Kubelet(self.ctx, self.nodes)
        self.services = ServiceAllocator(store, self.ctx.random("services"))
        # Any: each controller is handed back only the keys it queued itself.
        controllers: list[Controller[Any]] = [
            self.nodes,
            Scheduler(self.ctx),
            self.kubelet,
            ReplicaSetController(self.ctx),
            DeploymentController(self.ctx),
            StatefulSetController(self.ctx),
            DaemonSetController(self.ctx),
            EndpointsController(self.ctx),
            DisruptionController(self.ctx),
            ResourceQuotaController(self.ctx),
            self.volumes,
            EventExpiry(self.ctx),
        ]
        self.controllers = {c.name: c for c in controllers}
        self._watches: dict[str, list[Watch]] = {r: [] for r in RESOURCES}
        for controller in controllers:
            for resource, watch in controller.watches().items():
                self._watches[resource].append(watch)
        self._unsubscribe: Any = None
        self.cache.listener = self._changed

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> Cluster:
        self.services.install()
        ClaimAdmission(self.store).install()
        LimitRanger(self.store).install()  # mutating, before the quota counts what it set
        WebhookAdmission(self.store).install()  # validating, before the quota's: kube's order
        QuotaAdmission(self.store).install()
        TokenVolumeAdmission(self.store, self.ctx.random("token-volumes")).install()
        PodSecurityAdmission(self.store).install()  # validating: sees what the others set
        self._unsubscribe = self.store.subscribe(self._on_event, RESOURCES)
        for resource in RESOURCES:
            for obj in self.store.list(resource):
                self.cache.apply("ADDED", resource, obj)
        with self.lock:
            self.nodes.ensure_nodes(self.options.nodes)
            self.volumes.ensure_storage_class()
            for controller in self.controllers.values():
                controller.resync()
        self.queue.start()
        return self

    def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.queue.stop()

    def register_routes(self, add: Any) -> None:
        """Serves the fault API under /_kubesim/cluster/ through the server's route registration."""
        control.register(add, self)

    # -- faults --------------------------------------------------------------------------------

    def pause(self, group: str) -> None:
        """Stops the controllers or the kubelet; their work waits until `resume`."""
        self._check_group(group)
        self.queue.pause(group)

    def resume(self, group: str) -> None:
        self._check_group(group)
        self.queue.resume(group)
        with self.lock:
            for controller in self.controllers.values():
                if controller.group == group:
                    controller.resync()

    def paused(self) -> list[str]:
        return sorted(self.queue.paused())

    def add_node(self) -> Obj:
        with self.lock:
            return self.nodes.register()

    def remove_node(self, name: str) -> None:
        with self.lock:
            self.nodes.remove(name)

    def set_node_ready(self, name: str, ready: bool) -> Obj:
        with self.lock:
            return self.nodes.set_ready(name, ready)

    def crash_pod(
        self, namespace: str, name: str, *, reason: str = "Error", exit_code: int = 1,
        loop: bool = False,
    ) -> None:  # fmt: skip
        """The pod's containers exit with an error and restart (restartCount grows); with
        `loop`, each time they start, in CrashLoopBackOff between (`reason` "OOMKilled",
        `exit_code` 137: a memory limit's)."""
        with self.lock:
            pod = self.cache.get("pods", namespace, name) or self.store.get("pods", namespace, name)
            self.kubelet.crash(pod, reason=reason, exit_code=exit_code, loop=loop)

    def refuse_start(
        self, namespace: str, name: str, reason: str | None, message: str = ""
    ) -> None:
        """The container runtime refuses to start the pod's containers from now on, with a
        kubelet's waiting `reason` and `message` (CreateContainerConfigError, 'secret "x"
        not found'); running ones exit and wait. None: they start again."""
        with self.lock:
            pod = self.cache.get("pods", namespace, name) or self.store.get("pods", namespace, name)
            self.kubelet.refuse_start(pod, reason, message)

    def fail_pod(self, namespace: str, name: str) -> None:
        """The pod's containers exit with an error and the pod has Failed, whatever its
        restartPolicy (a pod its kubelet evicts or rejects)."""
        with self.lock:
            pod = self.cache.get("pods", namespace, name) or self.store.get("pods", namespace, name)
            self.kubelet.crash(pod, final=True)

    def fail_readiness(
        self, namespace: str, name: str, message: str | None = None, container: str | None = None
    ) -> list[str]:
        """The readiness probe of the pod's `container` (every container if None) fails until
        `pass_readiness`: running, but not ready, with an Unhealthy Event each probe period.
        `message` is the prober's output (default: "HTTP probe failed with statuscode: 503",
        or as a tcpSocket, exec or grpc probe of the container words it)."""
        with self.lock:
            pod = self.cache.get("pods", namespace, name) or self.store.get("pods", namespace, name)
            return self.kubelet.fail_readiness(pod, message, container)

    def pass_readiness(self, namespace: str, name: str) -> None:
        with self.lock:
            pod = self.cache.get("pods", namespace, name) or self.store.get("pods", namespace, name)
            self.kubelet.pass_readiness(pod)

    def delete_pod(
        self, namespace: str, name: str, grace_period_seconds: int | None = None
    ) -> None:
        with self.lock:
            self.store.delete("pods", namespace, name, grace_period_seconds=grace_period_seconds)

    @property
    def missing_images(self) -> list[str]:
        return list(self.options.missing_images)

    @missing_images.setter
    def missing_images(self, patterns: list[str]) -> None:
        self.options.missing_images = list(patterns)

    @staticmethod
    def _check_group(group: str) -> None:
        if group not in GROUPS:
            raise ValueError(f"unknown group {group!r}: expected one of {', '.join(GROUPS)}")

    # -- plumbing ------------------------------------------------------------------------------

    def _on_event(self, event_type: str, resource: str, obj: Obj) -> None:
        self.cache.apply(event_type, resource, obj)

    def _changed(self, resource: str, old: Obj | None, new: Obj | None) -> None:
        for watch in self._watches[resource]:
            watch(old, new)

    def _group_of(self, controller: str) -> str:
        return self.controllers[controller].group

    def _handle(self, controller: str, key: Hashable) -> float | None:
        with self.lock:
            try:
                return self.controllers[controller].reconcile(key)
            except Exception as exc:
                if is_status_error(exc, 409):
                    return 0.02  # a stale read; the cache catches up from the watch
                if is_status_error(exc, 404) or is_status_error(exc, 403):
                    return None  # gone, or its namespace is being deleted
                raise
