"""Follow a namespace of Memcached CRs and their Deployments through watches.

Convergence is observed, not polled: polling would add API load to what we
measure and blur the timings by its interval. Both operators are judged by the
same definition:
- spec converged: the Deployment's spec.replicas equals the CR's spec.size and
  status.observedGeneration equals metadata.generation;
- nodes converged: spec converged and status.nodes lists spec.size pods;
- ready: nodes converged and status.readyReplicas equals spec.size (this one
  includes kubesim's simulated pod start delay).
The floor (no operator: Deployments created and patched directly) is judged by the
Deployments and their pods: spec.replicas seen, then as many of its pods ready, counted
as both operators count them for status.readyReplicas. Not by the Deployment's own
status.readyReplicas: on a real cluster the deployment controller writes it behind a
client held to 20 requests a second, a minute after the last pod of 1,000 is ready,
where an operator reports from the pods (`reported` keeps that figure apart).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from bench.kube import MEMCACHED_PATH, KubeApi
from controllers.ownership import INSTANCE_LABEL
from controllers.pods import pod_is_ready


@dataclass(frozen=True)
class CrState:
    generation: int
    size: int
    observed: int | None
    nodes: int
    ready: int


class Fleet:
    """`pods`: follow the pods too, for the floor's readiness (an operator's is its CR's)."""

    def __init__(self, api: KubeApi, namespace: str, *, pods: bool = False) -> None:
        self.api = api
        self.namespace = namespace
        self.crs: dict[str, CrState] = {}
        self.replicas: dict[str, int] = {}
        self.reported: dict[str, int] = {}  # replicas, for those whose status says all ready
        self.pod_ready: dict[str, bool] = {}  # pod: ready and live
        self.pods_ready: dict[str, int] = {}  # Deployment: how many of its pods
        self.deployments_ready: set[str] = set()  # those with all their pods ready
        self.spec_ok: set[str] = set()
        self.nodes_ok: set[str] = set()
        self.ready_ok: set[str] = set()
        self.cond = threading.Condition()
        self._follows = pods
        self._ready = threading.Barrier(4 if pods else 3)
        self._stopped = threading.Event()

    def start(self) -> Fleet:
        paths = [
            (f"{MEMCACHED_PATH}/namespaces/{self.namespace}/memcacheds", self._on_cr),
            (f"/apis/apps/v1/namespaces/{self.namespace}/deployments", self._on_deployment),
        ]
        if self._follows:
            paths.append((f"/api/v1/namespaces/{self.namespace}/pods", self._on_pod))
        for path, handle in paths:
            threading.Thread(target=self._follow, args=(path, handle), daemon=True).start()
        self._ready.wait(timeout=30)
        return self

    def stop(self) -> None:
        """Stop following (call it before the API server goes away)."""
        self._stopped.set()

    def _follow(self, path: str, handle: Callable[[str, dict[str, Any]], None]) -> None:
        ready = False
        while not self._stopped.is_set():
            try:
                listed = self.api.request("GET", path)
                for obj in listed["items"]:
                    handle("ADDED", obj)
                version = listed["metadata"]["resourceVersion"]
                if not ready:
                    self._ready.wait(timeout=30)
                    ready = True
                self._watch(path, version, handle)
            except Exception:  # a dropped stream or 410 Gone: list again, then watch
                self._stopped.wait(0.1)

    def _watch(
        self, path: str, version: str, handle: Callable[[str, dict[str, Any]], None]
    ) -> None:
        while not self._stopped.is_set():
            query = [("resourceVersion", version), ("allowWatchBookmarks", "true")]
            for event in self.api.stream(path, query):
                if event["type"] == "ERROR":
                    return  # expired: the caller lists again
                version = event["object"]["metadata"].get("resourceVersion", version)
                if event["type"] != "BOOKMARK":
                    handle(event["type"], event["object"])

    def _on_cr(self, type_: str, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        with self.cond:
            if type_ == "DELETED":
                self.crs.pop(name, None)
            else:
                status = obj.get("status") or {}
                self.crs[name] = CrState(
                    generation=obj["metadata"].get("generation", 1),
                    size=(obj.get("spec") or {}).get("size", 1),
                    observed=status.get("observedGeneration"),
                    nodes=len(status.get("nodes") or []),
                    ready=status.get("readyReplicas") or 0,
                )
            self._settle(name)

    def _on_deployment(self, type_: str, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        with self.cond:
            if type_ == "DELETED":
                self.replicas.pop(name, None)
                self.reported.pop(name, None)
            else:
                replicas = (obj.get("spec") or {}).get("replicas", 1)
                self.replicas[name] = replicas
                status = obj.get("status") or {}
                if (
                    status.get("observedGeneration") == obj["metadata"].get("generation")
                    and (status.get("readyReplicas") or 0) == replicas
                    and (status.get("updatedReplicas") or 0) == replicas
                    and (status.get("replicas") or 0) == replicas
                ):
                    self.reported[name] = replicas
                else:
                    self.reported.pop(name, None)
            self._settle(name)

    def _on_pod(self, type_: str, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        owner = (meta.get("labels") or {}).get(INSTANCE_LABEL)
        if owner is None:
            return
        ready = type_ != "DELETED" and "deletionTimestamp" not in meta and pod_is_ready(obj)
        with self.cond:
            was = self.pod_ready.pop(meta["name"], False)
            if type_ != "DELETED":
                self.pod_ready[meta["name"]] = ready
            self.pods_ready[owner] = self.pods_ready.get(owner, 0) + ready - was
            self._settle(owner)

    def _settle(self, name: str) -> None:
        cr = self.crs.get(name)
        spec = (
            cr is not None and cr.observed == cr.generation and self.replicas.get(name) == cr.size
        )
        (self.spec_ok.add if spec else self.spec_ok.discard)(name)
        nodes = spec and cr is not None and cr.nodes == cr.size
        (self.nodes_ok.add if nodes else self.nodes_ok.discard)(name)
        ready = nodes and cr is not None and cr.ready == cr.size
        (self.ready_ok.add if ready else self.ready_ok.discard)(name)
        pods = name in self.replicas and self.pods_ready.get(name, 0) == self.replicas[name]
        (self.deployments_ready.add if pods else self.deployments_ready.discard)(name)
        self.cond.notify_all()

    # -- waiting ------------------------------------------------------------------------
    def wait(self, predicate: Callable[[], bool], timeout: float) -> float | None:
        """perf_counter() when the predicate first held, or None after `timeout` seconds."""
        deadline = time.perf_counter() + timeout
        with self.cond:
            while not predicate():
                left = deadline - time.perf_counter()
                if left <= 0:
                    return None
                self.cond.wait(left)
            return time.perf_counter()

    def spec_converged(self, name: str, generation: int) -> bool:
        cr = self.crs.get(name)
        return cr is not None and cr.generation >= generation and name in self.spec_ok

    def nodes_converged(self, name: str, generation: int) -> bool:
        cr = self.crs.get(name)
        return cr is not None and cr.generation >= generation and name in self.nodes_ok

    def ready(self, name: str, generation: int) -> bool:
        cr = self.crs.get(name)
        return cr is not None and cr.generation >= generation and name in self.ready_ok

    def deployment_ready(self, name: str, replicas: int) -> bool:
        """As many of its pods ready (a Fleet that follows pods only)."""
        return self.replicas.get(name) == replicas and name in self.deployments_ready

    def deployment_scaled(self, name: str, replicas: int) -> bool:
        return self.replicas.get(name) == replicas


def create_many(api: KubeApi, namespace: str, names: list[str], *, size: int) -> None:
    """Create CRs "at once": from a few threads, as fast as the API server takes them."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda name: api.create_memcached(namespace, name, size=size), names))


def create_deployments(api: KubeApi, namespace: str, names: list[str], *, replicas: int) -> None:
    """The floor's cold start: the Deployments an operator would create, created directly."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda n: api.create_deployment(namespace, n, replicas=replicas), names))
