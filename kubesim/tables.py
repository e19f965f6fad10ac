"""Table output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`) for `kubectl get`.

Columns and cell formats follow kube-apiserver's printers for built-in kinds, the CRD's
additionalPrinterColumns for custom resources, and the default Name/Created At otherwise.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from kubesim.jsonutil import dumps
from kubesim.resources import ResourceType
from kubesim.schema import get_path
from kubesim.selectors import selector_string

Cell = Callable[[dict[str, Any]], Any]
Column = tuple[str, str, int, Cell]  # name, type, priority, cell function


def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y{dy}d" if dy else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def _since(ts: str | None) -> str:
    if not ts:
        return "<unknown>"
    try:
        t = datetime.datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return "<unknown>"
    return human_duration((datetime.datetime.now(datetime.UTC) - t).total_seconds())


def _age(obj: dict[str, Any]) -> str:
    return _since(obj["metadata"].get("creationTimestamp"))


def _name(obj: dict[str, Any]) -> str:
    name: str = obj["metadata"]["name"]
    return name


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("spec") or {}


def _status(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("status") or {}


def _containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return ((_spec(obj).get("template") or {}).get("spec") or {}).get("containers") or []


def _pod_ready(obj: dict[str, Any]) -> str:
    statuses = _status(obj).get("containerStatuses") or []
    ready = sum(1 for c in statuses if c.get("ready"))
    return f"{ready}/{len(_spec(obj).get('containers') or [])}"


def _pod_status(obj: dict[str, Any]) -> str:
    status = _status(obj)
    reason = status.get("reason") or status.get("phase") or ""
    has_running = False
    for c in reversed(status.get("containerStatuses") or []):
        state = c.get("state") or {}
        if (state.get("waiting") or {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif (state.get("terminated") or {}).get("reason"):
            reason = state["terminated"]["reason"]
        elif state.get("terminated"):
            t = state["terminated"]
            reason = (
                f"Signal:{t['signal']}" if t.get("signal") else f"ExitCode:{t.get('exitCode', 0)}"
            )
        elif c.get("ready") and state.get("running"):
            has_running = True
    if reason == "Completed" and has_running:
        reason = "Running"
    if obj["metadata"].get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return reason


def _pod_restarts(obj: dict[str, Any]) -> str:
    statuses = _status(obj).get("containerStatuses") or []
    total = sum(c.get("restartCount", 0) for c in statuses)
    last = max(
        (
            ((c.get("lastState") or {}).get("terminated") or {}).get("finishedAt") or ""
            for c in statuses
        ),
        default="",
    )
    return f"{total} ({_since(last)} ago)" if total and last else str(total)


def _svc_ports(obj: dict[str, Any]) -> str:
    parts = []
    for p in _spec(obj).get("ports") or []:
        port = f"{p.get('port')}:{p['nodePort']}" if p.get("nodePort") else str(p.get("port"))
        parts.append(f"{port}/{p.get('protocol', 'TCP')}")
    return ",".join(parts) or "<none>"


def _svc_external(obj: dict[str, Any]) -> str:
    spec = _spec(obj)
    if spec.get("type") == "ExternalName":
        external: str = spec.get("externalName", "<none>")
        return external
    ips = list(spec.get("externalIPs") or [])
    for ing in (_status(obj).get("loadBalancer") or {}).get("ingress") or []:
        ips.append(ing.get("ip") or ing.get("hostname"))
    if ips:
        return ",".join(ips)
    return "<pending>" if spec.get("type") == "LoadBalancer" else "<none>"


def _node_status(obj: dict[str, Any]) -> str:
    # As kube-apiserver's printNode: a Ready condition that is not True (False or Unknown, as
    # a node that stopped reporting has) reads NotReady; only a node without one is Unknown.
    conds = {c.get("type"): c.get("status") for c in _status(obj).get("conditions") or []}
    ready = conds.get("Ready")
    status = "Unknown" if ready is None else "Ready" if ready == "True" else "NotReady"
    if _spec(obj).get("unschedulable"):
        status += ",SchedulingDisabled"
    return status


def _node_roles(obj: dict[str, Any]) -> str:
    roles = sorted(
        k.rpartition("/")[2]
        for k in obj["metadata"].get("labels") or {}
        if k.startswith("node-role.kubernetes.io/")
    )
    return ",".join(roles) or "<none>"


def _node_address(kind: str) -> Cell:
    def cell(obj: dict[str, Any]) -> str:
        for a in _status(obj).get("addresses") or []:
            if a.get("type") == kind:
                address: str = a.get("address", "<none>")
                return address
        return "<none>"

    return cell


def _endpoints(obj: dict[str, Any]) -> str:
    addrs = []
    for subset in obj.get("subsets") or []:
        ports = subset.get("ports") or [{}]
        for a in subset.get("addresses") or []:
            for p in ports:
                addrs.append(f"{a.get('ip')}:{p['port']}" if p.get("port") else a.get("ip"))
    if not addrs:
        return "<none>"
    more = len(addrs) - 3
    return ",".join(addrs[:3]) + (f" + {more} more..." if more > 0 else "")


def _event_object(obj: dict[str, Any]) -> str:
    inv = obj.get("involvedObject") or obj.get("regarding") or {}
    return f"{(inv.get('kind') or '').lower()}/{inv.get('name', '')}"


def _event_last_seen(obj: dict[str, Any]) -> str:
    ts = (
        obj.get("lastTimestamp")
        or (obj.get("series") or {}).get("lastObservedTime")
        or obj.get("eventTime")
        or obj["metadata"].get("creationTimestamp")
    )
    return _since(ts)


def _val(*keys: str, default: Any = 0) -> Cell:
    def cell(obj: dict[str, Any]) -> Any:
        cur: Any = obj
        for k in keys:
            cur = cur.get(k) if isinstance(cur, dict) else None
        return default if cur is None else cur

    return cell


def _pod_selector(obj: dict[str, Any]) -> str:
    return selector_string(_spec(obj).get("podSelector")) or "<none>"


def _budget(field: str) -> Cell:
    """A PodDisruptionBudget's int-or-string bound, printed as a string; N/A when unset."""

    def cell(obj: dict[str, Any]) -> str:
        value = _spec(obj).get(field)
        return "N/A" if value is None else str(value)

    return cell


def _job_duration(obj: dict[str, Any]) -> str:
    start = _status(obj).get("startTime")
    if not start:
        return ""
    end = _status(obj).get("completionTime")
    return human_duration(_seconds(end) - _seconds(start)) if end else _since(start)


def _seconds(ts: str) -> float:
    return datetime.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def _quota(prefix: str) -> Cell:
    """ "cpu: 0/2, pods: 1/10": used of hard, requests (or limits.*) only, as kubectl's printer."""

    def cell(obj: dict[str, Any]) -> str:
        hard = _status(obj).get("hard") or _spec(obj).get("hard") or {}
        used = _status(obj).get("used") or {}
        names = sorted(
            k for k in hard if k.startswith(prefix) if prefix or not k.startswith("limits.")
        )
        return ", ".join(f"{k}: {used.get(k, '0')}/{hard[k]}" for k in names)

    return cell


def _controller(obj: dict[str, Any]) -> str:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            group = ref.get("apiVersion", "").rpartition("/")[0]
            kind = ref.get("kind", "").lower() + (f".{group}" if group else "")
            return f"{kind}/{ref.get('name')}"
    return "<none>"


def _join(values: list[Any]) -> str:
    return ",".join(str(v) for v in values) or "<none>"


_WIDE_WORKLOAD: list[Column] = [
    ("Containers", "string", 1, lambda o: _join([c.get("name") for c in _containers(o)])),
    ("Images", "string", 1, lambda o: _join([c.get("image") for c in _containers(o)])),
    ("Selector", "string", 1, lambda o: selector_string(_spec(o).get("selector")) or "<none>"),
]
_AGE: Column = ("Age", "string", 0, _age)
_NAME_LAST: Column = ("Name", "string", 1, _name)  # events list the name last, wide only

BUILTIN: dict[str, list[Column]] = {
    "pods": [
        ("Ready", "string", 0, _pod_ready),
        ("Status", "string", 0, _pod_status),
        ("Restarts", "string", 0, _pod_restarts),
        _AGE,
        ("IP", "string", 1, _val("status", "podIP", default="<none>")),
        ("Node", "string", 1, _val("spec", "nodeName", default="<none>")),
        ("Nominated Node", "string", 1, _val("status", "nominatedNodeName", default="<none>")),
        ("Readiness Gates", "string", 1, lambda o: "<none>"),
    ],
    "services": [
        ("Type", "string", 0, _val("spec", "type", default="ClusterIP")),
        ("Cluster-IP", "string", 0, _val("spec", "clusterIP", default="<none>")),
        ("External-IP", "string", 0, _svc_external),
        ("Port(s)", "string", 0, _svc_ports),
        _AGE,
        (
            "Selector",
            "string",
            1,
            lambda o: (
                ",".join(f"{k}={v}" for k, v in sorted((_spec(o).get("selector") or {}).items()))
                or "<none>"
            ),
        ),
    ],
    "deployments.apps": [
        (
            "Ready",
            "string",
            0,
            lambda o: f"{_status(o).get('readyReplicas', 0)}/{_spec(o).get('replicas', 0)}",
        ),
        ("Up-to-date", "integer", 0, _val("status", "updatedReplicas")),
        ("Available", "integer", 0, _val("status", "availableReplicas")),
        _AGE,
        *_WIDE_WORKLOAD,
    ],
    "replicasets.apps": [
        ("Desired", "integer", 0, _val("spec", "replicas")),
        ("Current", "integer", 0, _val("status", "replicas")),
        ("Ready", "integer", 0, _val("status", "readyReplicas")),
        _AGE,
        *_WIDE_WORKLOAD,
    ],
    "statefulsets.apps": [
        (
            "Ready",
            "string",
            0,
            lambda o: f"{_status(o).get('readyReplicas', 0)}/{_spec(o).get('replicas', 0)}",
        ),
        _AGE,
        *_WIDE_WORKLOAD[:2],
    ],
    "daemonsets.apps": [
        ("Desired", "integer", 0, _val("status", "desiredNumberScheduled")),
        ("Current", "integer", 0, _val("status", "currentNumberScheduled")),
        ("Ready", "integer", 0, _val("status", "numberReady")),
        ("Up-to-date", "integer", 0, _val("status", "updatedNumberScheduled")),
        ("Available", "integer", 0, _val("status", "numberAvailable")),
        (
            "Node Selector",
            "string",
            0,
            lambda o: (
                ",".join(
                    f"{k}={v}"
                    for k, v in sorted(
                        (
                            ((_spec(o).get("template") or {}).get("spec") or {}).get("nodeSelector")
                            or {}
                        ).items()
                    )
                )
                or "<none>"
            ),
        ),
        _AGE,
        *_WIDE_WORKLOAD,
    ],
    "controllerrevisions.apps": [
        ("Controller", "string", 0, _controller),
        ("Revision", "integer", 0, _val("revision")),
        _AGE,
    ],
    "namespaces": [("Status", "string", 0, _val("status", "phase", default="")), _AGE],
    "nodes": [
        ("Status", "string", 0, _node_status),
        ("Roles", "string", 0, _node_roles),
        _AGE,
        ("Version", "string", 0, _val("status", "nodeInfo", "kubeletVersion", default="")),
        ("Internal-IP", "string", 1, _node_address("InternalIP")),
        ("External-IP", "string", 1, _node_address("ExternalIP")),
        ("OS-Image", "string", 1, _val("status", "nodeInfo", "osImage", default="")),
        ("Kernel-Version", "string", 1, _val("status", "nodeInfo", "kernelVersion", default="")),
        (
            "Container-Runtime",
            "string",
            1,
            _val("status", "nodeInfo", "containerRuntimeVersion", default=""),
        ),
    ],
    "configmaps": [
        ("Data", "integer", 0, lambda o: len(o.get("data") or {}) + len(o.get("binaryData") or {})),
        _AGE,
    ],
    "secrets": [
        ("Type", "string", 0, _val("type", default="")),
        ("Data", "integer", 0, lambda o: len(o.get("data") or {})),
        _AGE,
    ],
    "serviceaccounts": [("Secrets", "integer", 0, lambda o: len(o.get("secrets") or [])), _AGE],
    "endpoints": [("Endpoints", "string", 0, _endpoints), _AGE],
    "events": [
        ("Last Seen", "string", 0, _event_last_seen),
        ("Type", "string", 0, _val("type", default="")),
        ("Reason", "string", 0, _val("reason", default="")),
        ("Object", "string", 0, _event_object),
        ("Subobject", "string", 1, _val("involvedObject", "fieldPath", default="")),
        (
            "Source",
            "string",
            1,
            lambda o: (o.get("source") or {}).get("component") or o.get("reportingComponent", ""),
        ),
        ("Message", "string", 0, _val("message", default="")),
        (
            "First Seen",
            "string",
            1,
            lambda o: _since(o.get("firstTimestamp") or o.get("eventTime")),
        ),
        ("Count", "string", 1, _val("count", default=1)),
        _NAME_LAST,
    ],
    "persistentvolumeclaims": [
        ("Status", "string", 0, _val("status", "phase", default="")),
        ("Volume", "string", 0, _val("spec", "volumeName", default="")),
        ("Capacity", "string", 0, _val("status", "capacity", "storage", default="")),
        (
            "Access Modes",
            "string",
            0,
            lambda o: ",".join(
                {
                    "ReadWriteOnce": "RWO",
                    "ReadOnlyMany": "ROX",
                    "ReadWriteMany": "RWX",
                    "ReadWriteOncePod": "RWOP",
                }.get(m, m)
                for m in _status(o).get("accessModes") or []
            ),
        ),
        ("StorageClass", "string", 0, _val("spec", "storageClassName", default="<unset>")),
        (
            "VolumeAttributesClass",
            "string",
            0,
            _val("spec", "volumeAttributesClassName", default="<unset>"),
        ),
        _AGE,
        ("VolumeMode", "string", 1, _val("spec", "volumeMode", default="")),
    ],
    "persistentvolumes": [
        ("Capacity", "string", 0, _val("spec", "capacity", "storage", default="")),
        (
            "Access Modes",
            "string",
            0,
            lambda o: ",".join(
                {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX"}.get(m, m)
                for m in _spec(o).get("accessModes") or []
            ),
        ),
        ("Reclaim Policy", "string", 0, _val("spec", "persistentVolumeReclaimPolicy", default="")),
        ("Status", "string", 0, _val("status", "phase", default="")),
        (
            "Claim",
            "string",
            0,
            lambda o: (
                f"{_spec(o)['claimRef'].get('namespace')}/{_spec(o)['claimRef'].get('name')}"
                if _spec(o).get("claimRef")
                else ""
            ),
        ),
        ("StorageClass", "string", 0, _val("spec", "storageClassName", default="")),
        (
            "VolumeAttributesClass",
            "string",
            0,
            _val("spec", "volumeAttributesClassName", default="<unset>"),
        ),
        ("Reason", "string", 0, _val("status", "reason", default="")),
        _AGE,
    ],
    "leases.coordination.k8s.io": [
        ("Holder", "string", 0, _val("spec", "holderIdentity", default="")),
        _AGE,
    ],
    "endpointslices.discovery.k8s.io": [
        ("AddressType", "string", 0, _val("addressType", default="")),
        ("Ports", "string", 0, lambda o: _join([p.get("port") for p in o.get("ports") or []])),
        (
            "Endpoints",
            "string",
            0,
            lambda o: _join(
                [a for e in o.get("endpoints") or [] for a in e.get("addresses") or []]
            ),
        ),
        _AGE,
    ],
    "networkpolicies.networking.k8s.io": [
        ("Pod-Selector", "string", 0, _pod_selector),
        _AGE,
    ],
    "jobs.batch": [
        (
            "Completions",
            "string",
            0,
            lambda o: f"{_status(o).get('succeeded', 0)}/{_spec(o).get('completions', 1)}",
        ),
        ("Duration", "string", 0, _job_duration),
        _AGE,
    ],
    "cronjobs.batch": [
        ("Schedule", "string", 0, _val("spec", "schedule", default="")),
        ("Suspend", "boolean", 0, lambda o: bool(_spec(o).get("suspend"))),
        ("Active", "integer", 0, lambda o: len(_status(o).get("active") or [])),
        (
            "Last Schedule",
            "string",
            0,
            lambda o: _since(t) if (t := _status(o).get("lastScheduleTime")) else "<none>",
        ),
        _AGE,
    ],
    "resourcequotas": [
        _AGE,
        ("Request", "string", 0, _quota("")),
        ("Limit", "string", 0, _quota("limits.")),
    ],
    "poddisruptionbudgets.policy": [
        ("Min Available", "string", 0, _budget("minAvailable")),
        ("Max Unavailable", "string", 0, _budget("maxUnavailable")),
        ("Allowed Disruptions", "integer", 0, _val("status", "disruptionsAllowed")),
        _AGE,
    ],
    "validatingwebhookconfigurations.admissionregistration.k8s.io": [
        ("Webhooks", "integer", 0, lambda o: len(o.get("webhooks") or [])),
        _AGE,
    ],
    "storageclasses.storage.k8s.io": [
        ("Provisioner", "string", 0, _val("provisioner", default="")),
        ("ReclaimPolicy", "string", 0, _val("reclaimPolicy", default="Delete")),
        ("VolumeBindingMode", "string", 0, _val("volumeBindingMode", default="Immediate")),
        (
            "AllowVolumeExpansion",
            "string",
            0,
            lambda o: "true" if o.get("allowVolumeExpansion") else "false",
        ),
        _AGE,
    ],
}

_DESCRIPTIONS = {
    "Name": "Name must be unique within a namespace. Is required when creating resources, "
    "although some resources may allow a client to request the generation of an "
    "appropriate name automatically. Name is primarily intended for creation "
    "idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
    "Age": "CreationTimestamp is a timestamp representing the server time when this object was "
    "created.",
}


def _cr_cell(path: str, type_: str) -> Cell:
    def cell(obj: dict[str, Any]) -> Any:
        value = get_path(obj, path)
        if value is None:
            return None
        if type_ == "date" and isinstance(value, str):
            return _since(value)
        if type_ == "integer" and isinstance(value, (int, float)):
            return int(value)
        if isinstance(value, (dict, list)):
            return dumps(value).decode()
        return value

    return cell


def columns_for(rt: ResourceType, version: str) -> list[Column]:
    if rt.crd:
        specs = (rt.version_info.get(version) or {}).get("columns")
        if not specs:
            return [("Age", "date", 0, _age)]
        return [
            (
                c["name"],
                c.get("type", "string"),
                c.get("priority", 0),
                _cr_cell(c.get("jsonPath", ""), c.get("type", "string")),
            )
            for c in specs
        ]
    if rt.key in BUILTIN:
        return BUILTIN[rt.key]
    return [("Created At", "date", 0, lambda o: o["metadata"].get("creationTimestamp"))]


def _partial(obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj["metadata"],
    }


def table(
    rt: ResourceType,
    version: str,
    objs: list[dict[str, Any]],
    *,
    include: str,
    list_meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    cols = columns_for(rt, version)
    name_first = _NAME_LAST not in cols
    definitions = []
    if name_first:
        definitions.append(
            {
                "name": "Name",
                "type": "string",
                "format": "name",
                "description": _DESCRIPTIONS["Name"],
                "priority": 0,
            }
        )
    for name, type_, priority, _ in cols:
        definitions.append(
            {
                "name": name,
                "type": type_,
                "format": "",
                "description": _DESCRIPTIONS.get(name, name),
                "priority": priority,
            }
        )
    rows = []
    for obj in objs:
        row: dict[str, Any] = {
            "cells": ([_name(obj)] if name_first else []) + [fn(obj) for _, _, _, fn in cols]
        }
        if include == "Object":
            row["object"] = obj
        elif include != "None":
            row["object"] = _partial(obj)
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta or {},
        "columnDefinitions": definitions,
        "rows": rows,
    }
