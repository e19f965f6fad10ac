"""Endpoints and EndpointSlices: the ready (and not-ready) pods each Service selects."""

from __future__ import annotations

import copy

from kubesim.cluster import names
from kubesim.cluster.api import is_status_error
from kubesim.cluster.controller import (
    Controller,
    Key,
    Obj,
    Watch,
    controller_ref,
    is_deleting,
    key_of,
    pod_ready,
)
from kubesim.cluster.selectors import labels_of, matches_map
from kubesim.cluster.workloads import create_with_random_name

SLICES = "endpointslices.discovery.k8s.io"
SERVICE_NAME = "kubernetes.io/service-name"
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
SLICE_CONTROLLER = "endpointslice-controller.k8s.io"


class EndpointsController(Controller[Key]):
    name = "endpoints"
    resource = "services"

    def watches(self) -> dict[str, Watch]:
        return {**super().watches(), "pods": self._pod_changed}

    def _pod_changed(self, old: Obj | None, new: Obj | None) -> None:
        pod = new or old
        assert pod is not None
        namespace = pod["metadata"]["namespace"]
        for service in self.ctx.cache.list("services", namespace):
            selector = service.get("spec", {}).get("selector")
            if selector and any(
                p is not None and matches_map(selector, labels_of(p)) for p in (old, new)
            ):
                self.enqueue(key_of(service))

    def reconcile(self, key: Key) -> float | None:
        service = self.ctx.cache.get("services", *key)
        if service is None:
            self.ctx.api.delete("endpoints", *key)
            return None
        selector = service.get("spec", {}).get("selector")
        if not selector or is_deleting(service):
            return None  # without a selector, the endpoints are the user's to manage
        pods = [
            p
            for p in self.ctx.cache.list("pods", key[0])
            if matches_map(selector, labels_of(p)) and p.get("status", {}).get("podIP")
        ]
        pods.sort(key=lambda p: p["metadata"]["name"])
        self._sync_endpoints(service, pods)
        self._sync_slice(service, pods)
        return None

    def _sync_endpoints(self, service: Obj, pods: list[Obj]) -> None:
        groups: dict[tuple[tuple[str, int, str], ...], Obj] = {}
        for pod in pods:
            if is_deleting(pod) and not service["spec"].get("publishNotReadyAddresses"):
                continue
            ports = tuple(resolve_ports(service, pod))
            subset = groups.setdefault(ports, {"addresses": [], "notReadyAddresses": []})
            address = {
                "ip": pod["status"]["podIP"],
                **_hostname(service, pod),
                "nodeName": pod["spec"].get("nodeName"),
                "targetRef": _ref(pod),
            }
            ready = pod_ready(pod) or service["spec"].get("publishNotReadyAddresses")
            subset["addresses" if ready else "notReadyAddresses"].append(address)
        subsets = []
        for ports, subset in groups.items():
            subset = {k: v for k, v in subset.items() if v}
            if ports:
                subset["ports"] = [_port(name, port, protocol) for name, port, protocol in ports]
            subsets.append(subset)
        meta = service["metadata"]
        want: Obj = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {
                "name": meta["name"],
                "namespace": meta["namespace"],
                "labels": meta.get("labels") or {},
            },
        }
        if subsets:
            want["subsets"] = subsets
        have = self.ctx.cache.get("endpoints", meta["namespace"], meta["name"])
        if have is None:
            try:
                self.ctx.api.create("endpoints", want)
            except Exception as exc:
                if not is_status_error(exc, 409):
                    raise
                # Someone made it first: read it, and retry as an update (409 requeues).
                self.ctx.api.refresh("endpoints", meta["namespace"], meta["name"])
                raise
            return
        if (
            have.get("subsets") == want.get("subsets")
            and (have["metadata"].get("labels") or {}) == want["metadata"]["labels"]
        ):
            return
        body = copy.deepcopy(have)
        body["metadata"]["labels"] = want["metadata"]["labels"]
        body.pop("subsets", None)
        body.update({"subsets": subsets} if subsets else {})
        annotations = body["metadata"].setdefault("annotations", {})
        annotations["endpoints.kubernetes.io/last-change-trigger-time"] = names.micro_time()
        self.ctx.api.update("endpoints", body)

    def _sync_slice(self, service: Obj, pods: list[Obj]) -> None:
        endpoints, ports = [], None
        for pod in pods:
            ready = pod_ready(pod) and not is_deleting(pod)
            endpoints.append(
                {
                    "addresses": [pod["status"]["podIP"]],
                    **_hostname(service, pod),
                    "conditions": {
                        "ready": ready,
                        "serving": pod_ready(pod),
                        "terminating": is_deleting(pod),
                    },
                    "nodeName": pod["spec"].get("nodeName"),
                    "targetRef": _ref(pod),
                }
            )
            if ports is None:
                ports = [_port(n, p, proto) for n, p, proto in resolve_ports(service, pod)]
        meta = service["metadata"]
        labels = {
            **(meta.get("labels") or {}),
            SERVICE_NAME: meta["name"],
            MANAGED_BY: SLICE_CONTROLLER,
        }
        existing = self.ctx.cache.owned(SLICES, meta["uid"])
        if not existing:
            slice_ = {
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": {
                    "namespace": meta["namespace"],
                    "labels": labels,
                    "ownerReferences": [controller_ref(service)],
                },
                "addressType": "IPv4",
                "endpoints": endpoints,
                "ports": ports or [],
            }
            create_with_random_name(self.ctx, self.rng, SLICES, slice_, meta["name"])
            return
        have = existing[0]
        if (
            have.get("endpoints") == endpoints
            and have.get("ports") == (ports or [])
            and have["metadata"].get("labels") == labels
        ):
            return
        body = copy.deepcopy(have)
        body["metadata"]["labels"] = labels
        body["endpoints"], body["ports"] = endpoints, ports or []
        self.ctx.api.update(SLICES, body)


def resolve_ports(service: Obj, pod: Obj) -> list[tuple[str, int, str]]:
    """Service ports to the pod's ports: a named targetPort is looked up in the containers."""
    out = []
    for port in service.get("spec", {}).get("ports") or []:
        target = port.get("targetPort", port.get("port"))
        if isinstance(target, str) and not target.isdigit():
            found = next(
                (
                    p.get("containerPort")
                    for c in pod["spec"].get("containers") or []
                    for p in c.get("ports") or []
                    if p.get("name") == target
                ),
                None,
            )
            if found is None:
                continue
            target = found
        out.append((port.get("name", ""), int(target), port.get("protocol", "TCP")))
    return out


def _port(name: str, port: int, protocol: str) -> Obj:
    return (
        {"name": name, "port": port, "protocol": protocol}
        if name
        else {"port": port, "protocol": protocol}
    )


def _hostname(service: Obj, pod: Obj) -> Obj:
    """A pod whose subdomain is the Service (a StatefulSet's) is named by its hostname."""
    spec = pod.get("spec", {})
    if spec.get("hostname") and spec.get("subdomain") == service["metadata"]["name"]:
        return {"hostname": spec["hostname"]}
    return {}


def _ref(pod: Obj) -> Obj:
    meta = pod["metadata"]
    return {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]}
