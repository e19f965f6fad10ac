"""The pod status a kubelet reports, derived from the simulated runtime of the pod."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from kubesim.cluster import images, names
from kubesim.cluster.controller import Obj

if TYPE_CHECKING:
    from kubesim.cluster.kubelet import Runtime

_CONDITION_ORDER = (
    "PodReadyToStartContainers",
    "Initialized",
    "Ready",
    "ContainersReady",
    "PodScheduled",
)


def pod_words(pod: Obj) -> str:
    """A pod as the kubelet's messages name it: name_namespace(uid)."""
    meta = pod["metadata"]
    return f"{meta['name']}_{meta.get('namespace', '')}({meta['uid']})"


def go_duration(seconds: float) -> str:
    """Seconds as Go's time.Duration prints them: 500ms, 10s, 1m20s, 5m0s (whole seconds
    above one, as a kubelet's back-offs are)."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest}s" if minutes else f"{rest}s"


def container_id(pod_uid: str, name: str, restarts: int) -> str:
    return "containerd://" + hashlib.sha256(f"{pod_uid}/{name}/{restarts}".encode()).hexdigest()


def container_status(pod: Obj, container: Obj, rt: Runtime) -> Obj:
    name, image = container["name"], container.get("image") or ""
    restarts = rt.restarts
    out: Obj = {
        "name": name,
        "image": image,
        "imageID": "",
        "lastState": {},
        "ready": False,
        "restartCount": restarts,
    }
    refused = rt.refused_start if rt.stage == "start_refused" else None
    if rt.last_state and (name in rt.running or refused) and rt.stage != "failed":
        last = {**rt.last_state}
        last["terminated"] = {  # the run that ended: its logs are read by this ID
            **last["terminated"],
            "containerID": container_id(pod["metadata"]["uid"], name, restarts - 1),
        }
        out["lastState"] = last
    if refused:
        reason, said = refused
        out["state"] = {"waiting": {"reason": reason, **({"message": said} if said else {})}}
        out["started"] = False
        return out
    if name in rt.invalid:
        message = f'Failed to apply default image tag "{image}": couldn\'t parse image reference "{image}": invalid reference format'
        out["state"] = {"waiting": {"reason": "InvalidImageName", "message": message}}
    elif name in rt.failing and rt.stage == "pull_error":
        message = f"rpc error: code = NotFound desc = {images.pull_error(image)}"
        out["state"] = {"waiting": {"reason": "ErrImagePull", "message": message}}
    elif name in rt.failing and rt.stage == "pull_backoff":
        out["state"] = {
            "waiting": {
                "reason": "ImagePullBackOff",
                "message": f'Back-off pulling image "{image}"',
            }
        }
    elif name not in rt.running:
        out["state"] = {"waiting": {"reason": "ContainerCreating"}}
    else:
        out |= {
            "image": images.normalize(image),
            "imageID": images.image_id(image),
            "containerID": container_id(pod["metadata"]["uid"], name, restarts),
        }
        if rt.stage == "crash_backoff":  # the last container's ID, as a real kubelet says
            back_off = go_duration(rt.crash_backoff)
            message = f"back-off {back_off} restarting failed container={name} pod={pod_words(pod)}"
            out["containerID"] = container_id(pod["metadata"]["uid"], name, restarts - 1)
            out["started"] = False
            out["state"] = {"waiting": {"reason": "CrashLoopBackOff", "message": message}}
            return out
        if rt.stage in ("crashed", "failed"):
            out["started"] = False
            out["state"] = {
                "terminated": {**rt.last_state["terminated"], "containerID": out["containerID"]}
            }
            return out
        out["ready"] = (
            rt.stage in ("running", "terminating") and not rt.probing and name not in rt.unready
        )
        out["started"] = True
        out["state"] = {"running": {"startedAt": rt.container_started}}
        return out
    out["started"] = False
    return out


def pod_status(pod: Obj, node: Obj, rt: Runtime) -> Obj:
    existing = pod.get("status") or {}
    containers = pod["spec"].get("containers") or []
    statuses = [container_status(pod, c, rt) for c in containers]
    unready = [s["name"] for s in statuses if not s["ready"]]
    sandbox = bool(rt.ip)
    stamp = names.rfc3339()
    not_ready = ("False", "PodFailed" if rt.stage == "failed" else "ContainersNotReady")
    values = {
        "PodReadyToStartContainers": ("True" if sandbox else "False", None),
        "Initialized": ("True", None),
        "Ready": not_ready if unready else ("True", None),
        "ContainersReady": not_ready if unready else ("True", None),
        "PodScheduled": ("True", None),
    }
    conditions = []
    for type_ in _CONDITION_ORDER:
        cond_status, reason = values[type_]
        seen = rt.transitions.get(type_)
        if seen is None or seen[0] != cond_status:
            seen = rt.transitions[type_] = (cond_status, stamp)
        cond: Obj = {
            "type": type_,
            "status": cond_status,
            "lastProbeTime": None,
            "lastTransitionTime": seen[1],
        }
        if reason == "PodFailed":
            cond |= {"reason": reason}
        elif reason:
            cond |= {
                "reason": reason,
                "message": f"containers with unready status: [{' '.join(unready)}]",
            }
        conditions.append(cond)
    host_ip = next(
        (
            a["address"]
            for a in node.get("status", {}).get("addresses") or []
            if a.get("type") == "InternalIP"
        ),
        "",
    )
    # A container waiting after it has run counts as stopped, which keeps a restarting pod
    # Running (the kubelet's getPhase); one that never ran keeps it Pending.
    running = (
        rt.stage == "crash_backoff"
        or any(s["state"].get("running") or s["state"].get("terminated") for s in statuses)
        or (rt.stage == "start_refused" and bool(rt.last_state))
    )
    status: Obj = {
        "phase": "Failed" if rt.stage == "failed" else "Running" if running else "Pending",
        "conditions": conditions,
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "startTime": rt.start_time,
        "containerStatuses": statuses,
        "qosClass": existing.get("qosClass", "BestEffort"),
    }
    if sandbox:
        status |= {"podIP": rt.ip, "podIPs": [{"ip": rt.ip}]}
    init = pod["spec"].get("initContainers") or []
    if init:
        status["initContainerStatuses"] = [
            {
                "name": c["name"],
                "image": images.normalize(c.get("image") or ""),
                "imageID": images.image_id(c.get("image") or ""),
                "ready": True,
                "restartCount": 0,
                "started": False,
                "state": {
                    "terminated": {
                        "exitCode": 0,
                        "reason": "Completed",
                        "startedAt": rt.start_time,
                        "finishedAt": rt.start_time,
                    }
                },
                "lastState": {},
            }
            for c in init
        ]
    return status
