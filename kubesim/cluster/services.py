"""ClusterIP and NodePort allocation, as an admission step of Service writes.

Allocation reads the committed Services under the store lock, so there is no
separate ledger that a failed or dry-run request could leave behind.
"""

from __future__ import annotations

import ipaddress
import random
from typing import Any

from kubesim.errors import FieldError, GoLiteral, invalid, render_value

Obj = dict[str, Any]

SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
NODE_PORTS = range(30000, 32768)
_NODE_PORT_TYPES = ("NodePort", "LoadBalancer")


class ServiceAllocator:
    def __init__(self, store: Any, rng: random.Random) -> None:
        self.store = store
        self.rng = rng

    def install(self) -> None:
        self.store.register_admission("services", self.admit)

    def admit(self, op: str, new: Obj | None, old: Obj | None) -> None:
        if op not in ("CREATE", "UPDATE") or new is None:
            return
        spec = new.setdefault("spec", {})
        meta = new["metadata"]
        # kube-apiserver allocates before it finds a created name taken: a Service created
        # again with its own nodePort or clusterIP gets 422 "already allocated", not 409.
        others = [s for s in self.store.list("services") if op == "CREATE" or _key(s) != _key(new)]
        # As kube-apiserver: the clusterIP first; a refused one is the only error told.
        errors = self._cluster_ip(spec, (old or {}).get("spec") or {}, others)
        if not errors:
            errors = self._node_ports(spec, (old or {}).get("spec") or {}, others)
        if errors:
            raise invalid("Service", "", meta.get("name", ""), errors)

    def _cluster_ip(self, spec: Obj, old: Obj, others: list[Obj]) -> list[FieldError]:
        if spec.get("type") == "ExternalName":
            return []
        wanted = (
            spec.get("clusterIP") or (spec.get("clusterIPs") or [None])[0] or old.get("clusterIP")
        )
        if wanted and old.get("clusterIP") and wanted != old["clusterIP"]:
            return [
                FieldError("Invalid", "spec.clusterIPs[0]", _ips(wanted), "may not change once set")
            ]
        if wanted == "None":
            spec["clusterIP"], spec["clusterIPs"] = "None", ["None"]
            return []
        used = {s.get("spec", {}).get("clusterIP") for s in others}
        if wanted and wanted != old.get("clusterIP"):
            try:
                inside = ipaddress.ip_address(wanted) in SERVICE_CIDR
            except ValueError:
                return [
                    FieldError(
                        "Invalid", "spec.clusterIPs[0]", wanted, "must be a valid IP address"
                    )
                ]
            if not inside:
                detail = f"failed to allocate IP {wanted}: the provided IP ({wanted}) is not in the valid range. The range of valid IPs is {SERVICE_CIDR}"
                return [FieldError("Invalid", "spec.clusterIPs", _ips(wanted), detail)]
            if wanted in used:
                detail = f"failed to allocate IP {wanted}: provided IP is already allocated"
                return [FieldError("Invalid", "spec.clusterIPs", _ips(wanted), detail)]
        ip = wanted or self._free_ip(used)
        spec["clusterIP"], spec["clusterIPs"] = ip, [ip]
        return []

    def _free_ip(self, used: set[str | None]) -> str:
        size = SERVICE_CIDR.num_addresses
        while True:
            ip = str(SERVICE_CIDR[self.rng.randrange(2, size - 1)])
            if ip not in used:
                return ip

    def _node_ports(self, spec: Obj, old: Obj, others: list[Obj]) -> list[FieldError]:
        ports = spec.get("ports") or []
        if spec.get("type") not in _NODE_PORT_TYPES:
            for port in ports:
                port.pop("nodePort", None)
            return []
        used = {p.get("nodePort") for s in others for p in s.get("spec", {}).get("ports") or []}
        kept = {
            (p.get("port"), p.get("protocol", "TCP")): p.get("nodePort")
            for p in old.get("ports") or []
        }
        errors, taken = [], set()
        for i, port in enumerate(ports):
            wanted = port.get("nodePort") or kept.get(
                (port.get("port"), port.get("protocol", "TCP"))
            )
            if wanted:
                if wanted not in NODE_PORTS:
                    detail = f"provided port is not in the valid range. The range of valid ports is {NODE_PORTS.start}-{NODE_PORTS.stop - 1}"
                    errors.append(
                        FieldError("Invalid", f"spec.ports[{i}].nodePort", wanted, detail)
                    )
                elif wanted in taken:
                    errors.append(FieldError("Duplicate", f"spec.ports[{i}].nodePort", wanted))
                elif wanted in used:
                    detail = "provided port is already allocated"
                    errors.append(
                        FieldError("Invalid", f"spec.ports[{i}].nodePort", wanted, detail)
                    )
                port["nodePort"] = wanted
                taken.add(wanted)
        for port in ports:
            if not port.get("nodePort"):
                while (candidate := self.rng.choice(NODE_PORTS)) in used or candidate in taken:
                    pass
                port["nodePort"] = candidate
                taken.add(candidate)
        return errors


def _ips(ip: str) -> GoLiteral:
    """The clusterIPs of an error, as Go prints the list: []string{"10.96.0.10"}."""
    return GoLiteral(f"[]string{{{render_value(ip)}}}")


def _key(service: Obj) -> tuple[str, str]:
    return service["metadata"].get("namespace") or "", service["metadata"].get("name", "")
