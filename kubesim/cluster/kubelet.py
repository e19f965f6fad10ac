"""The kubelets of every simulated node: start containers, report pod status, stop pods.

Each pod has an in-memory runtime whose stage advances on timers:
creating -> running, or creating -> pull_error (ErrImagePull) -> pull_backoff
(ImagePullBackOff) -> creating again; crashed -> running (failed, for good, when the
restartPolicy is Never); a crash loop: crashed (restarted at once) -> running ->
crash_backoff (CrashLoopBackOff) -> running -> ..., each back-off twice the last;
terminating -> gone.
The pod status written to the store is derived from that runtime, so it reads
like a real node's report.
"""

from __future__ import annotations

import copy
import hashlib
import time
from dataclasses import dataclass, field

from kubesim.cluster import images, names
from kubesim.cluster.api import is_status_error
from kubesim.cluster.controller import (
    Context,
    Controller,
    Key,
    Obj,
    Watch,
    condition,
    is_deleting,
    key_of,
    node_ready,
)
from kubesim.cluster.nodes import NodeController, node_index
from kubesim.cluster.podstatus import pod_status, pod_words

COMPONENT = "kubelet"
MAX_BACKOFF = 300.0


@dataclass
class Runtime:
    stage: str = "creating"
    due: float = 0.0
    ip: str = ""
    start_time: str = ""
    restarts: int = 0
    container_started: str = ""
    last_state: Obj = field(default_factory=dict)
    running: set[str] = field(default_factory=set)
    failing: dict[str, str] = field(default_factory=dict)
    invalid: dict[str, str] = field(default_factory=dict)
    # The containers whose image is being pulled (decided once, when the pod arrives).
    pulling: set[str] = field(default_factory=set)
    pull_failures: int = 0
    # What the runtime says each time it is to start the containers, until cleared: a
    # container waiting reason and message (CreateContainerConfigError, 'secret "x" not
    # found'). Set by a test's fault (refuse_start); the containers wait, and start once it
    # is cleared, as a real kubelet's do once the Secret is there.
    refused_start: tuple[str, str] | None = None
    # A readiness probe's initialDelaySeconds: running, but not ready until then.
    ready_at: float = 0.0
    probing: bool = False
    # Containers whose readiness probe fails, with the prober's output if one was given
    # (None: as the probe's kind words it), and when it probes them next.
    unready: dict[str, str | None] = field(default_factory=dict)
    next_probe: float = 0.0
    transitions: dict[str, tuple[str, str]] = field(default_factory=dict)
    # A crash loop's exit (reason, code): the containers exit so each time they start.
    crash_loop: tuple[str, int] | None = None
    crash_backoff: float = 0.0  # seconds a loop's next exit waits (0 before its first exit)


class Kubelet(Controller[Key]):
    name = "kubelet"
    group = "kubelet"

    def __init__(self, ctx: Context, nodes: NodeController) -> None:
        super().__init__(ctx)
        self.nodes = nodes
        self.runtimes: dict[str, Runtime] = {}
        self._ips: dict[str, set[str]] = {}
        self._pulled: dict[str, set[str]] = {}
        self._uid_of: dict[Key, str] = {}

    def watches(self) -> dict[str, Watch]:
        return {"pods": self._pod_changed, "nodes": self._node_changed}

    def _pod_changed(self, old: Obj | None, new: Obj | None) -> None:
        pod = new or old
        if pod is not None and (pod.get("spec", {}).get("nodeName") or new is None):
            self.enqueue(key_of(pod))

    def _node_changed(self, old: Obj | None, new: Obj | None) -> None:
        if new is not None and (old is None or node_ready(old) != node_ready(new)):
            for pod in self.ctx.cache.pods_on(new["metadata"]["name"]):
                self.enqueue(key_of(pod))

    def resync(self) -> None:
        for pod in self.ctx.cache.list("pods"):
            if pod.get("spec", {}).get("nodeName"):
                self.enqueue(key_of(pod))

    # -- faults --------------------------------------------------------------------------------

    def crash(
        self, pod: Obj, *, final: bool = False, reason: str = "Error", exit_code: int = 1,
        loop: bool = False,
    ) -> None:  # fmt: skip
        """The containers exit with an error; the kubelet restarts them after a short pause,
        unless the pod's restartPolicy is Never or the crash is `final` (as a pod the kubelet
        evicts or rejects): then the pod has Failed. With `loop` they exit so (`reason`,
        `exit_code`: "OOMKilled", 137 for a memory limit) each time they start, and the
        kubelet waits a back-off between restarts, as a real one does (CrashLoopBackOff)."""
        rt = self.runtimes.get(pod["metadata"]["uid"])
        if rt is None or rt.stage != "running":
            raise ValueError(f"pod {pod['metadata']['name']} has no running containers")
        rt.crash_loop = (reason, exit_code) if loop else None
        self._exit(pod, rt, reason, exit_code, final=final)

    def _exit(self, pod: Obj, rt: Runtime, reason: str, exit_code: int, *, final: bool) -> None:
        rt.last_state = {
            "terminated": {
                "containerID": "",
                "exitCode": exit_code,
                "finishedAt": names.rfc3339(),
                "reason": reason,
                "startedAt": rt.container_started,
            }
        }
        if final or pod["spec"].get("restartPolicy") == "Never":
            rt.stage = "failed"
        elif rt.crash_loop and rt.crash_backoff:  # exited again within its back-off
            rt.restarts += 1
            rt.stage, rt.due = "crash_backoff", time.monotonic() + rt.crash_backoff
            for c in pod["spec"].get("containers") or []:
                said = f"Back-off restarting failed container {c['name']} in pod {pod_words(pod)}"
                self._event(pod, "warning", "BackOff", said, c)
        else:  # restarted at once; a loop's next exit waits the back-off this starts
            rt.restarts += 1
            rt.stage, rt.due = "crashed", time.monotonic() + self.ctx.start_delay()
            if rt.crash_loop:
                rt.crash_backoff = self.ctx.options.crash_backoff
        self.enqueue(key_of(pod))

    def refuse_start(self, pod: Obj, reason: str | None, message: str = "") -> None:
        """From now on the runtime refuses to start the pod's containers, with `reason` and
        `message` (None: it starts them again). Running ones exit and are not restarted:
        they wait with that reason, as a container whose next start fails does."""
        rt = self.runtimes.get(pod["metadata"]["uid"])
        if rt is None:
            raise ValueError(f"pod {pod['metadata']['name']} runs on no node yet")
        rt.refused_start = (reason, message) if reason else None
        if reason and rt.stage == "running":
            rt.last_state = {"terminated": {
                "containerID": "", "exitCode": 1, "finishedAt": names.rfc3339(),
                "reason": "Error", "startedAt": rt.container_started,
            }}  # fmt: skip
            rt.restarts += 1
            rt.running.clear()
        if reason and rt.stage in ("running", "creating", "crashed", "crash_backoff"):
            rt.stage = "start_refused"
            for c in pod["spec"].get("containers") or []:
                self._event(pod, "warning", "Failed", f"Error: {message or reason}", c)
        elif not reason and rt.stage == "start_refused":  # started as after a crash, or anew
            ran = bool(rt.container_started)
            rt.stage = "crashed" if ran else "creating"
            rt.due = time.monotonic() + self.ctx.start_delay()
            if ran:
                rt.running = {c["name"] for c in pod["spec"].get("containers") or []}
        self.enqueue(key_of(pod))

    def fail_readiness(self, pod: Obj, output: str | None, container: str | None) -> list[str]:
        """The readiness probe of `container` (of every container if None) fails from now
        on, with `output` as the prober's (worded as the probe's kind would be if None);
        returns the containers. Ready turns False at once, as if failureThreshold probes had
        already failed."""
        rt = self.runtimes.get(pod["metadata"]["uid"])
        if rt is None:
            raise ValueError(f"pod {pod['metadata']['name']} runs on no node yet")
        containers = [
            c
            for c in pod["spec"].get("containers") or []
            if container is None or c["name"] == container
        ]
        if not containers:
            raise ValueError(f"pod {pod['metadata']['name']} has no container {container!r}")
        for c in containers:
            rt.unready[c["name"]] = output
        rt.next_probe = max(time.monotonic(), rt.ready_at)
        self.enqueue(key_of(pod))
        return [c["name"] for c in containers]

    def pass_readiness(self, pod: Obj) -> None:
        """The readiness probes of the pod pass again: its running containers are ready."""
        rt = self.runtimes.get(pod["metadata"]["uid"])
        if rt is not None:
            rt.unready.clear()
        self.enqueue(key_of(pod))

    # -- the loop ------------------------------------------------------------------------------

    def reconcile(self, key: Key) -> float | None:
        pod = self.ctx.cache.get("pods", *key)
        if pod is None:
            self._forget(key)
            return None
        node_name = pod.get("spec", {}).get("nodeName")
        node = self.ctx.cache.get("nodes", None, node_name) if node_name else None
        if node is None or node_name in self.nodes.down:
            return None  # no kubelet runs there
        uid = pod["metadata"]["uid"]
        if (previous := self._uid_of.get(key)) is not None and previous != uid:
            self._release(previous)  # the same name, a new pod (a StatefulSet replacement)
        self._uid_of[key] = uid
        rt = self.runtimes.get(uid)
        if rt is None:
            rt = self.runtimes[uid] = self._adopt(pod, node)
        if is_deleting(pod):
            return self._terminate(pod, rt)
        now = time.monotonic()
        if rt.due <= now:
            self._advance(pod, node, rt)
        rt.probing = rt.stage == "running" and rt.ready_at > time.monotonic()
        next_probe = self._failing_probes(pod, rt)
        self._write_status(pod, node, rt)
        if rt.probing:
            return max(rt.ready_at - time.monotonic(), 0.001)
        if next_probe is not None:
            return next_probe
        if rt.stage in ("invalid", "failed", "start_refused") or (
            rt.stage == "running" and not rt.crash_loop
        ):
            return None
        return max(rt.due - time.monotonic(), 0.001)

    def _failing_probes(self, pod: Obj, rt: Runtime) -> float | None:
        """A failing readiness probe fails again every periodSeconds while its container
        runs, each time with the Event the kubelet's prober records (the recorder aggregates
        the repeats); returns the seconds until the next probe, None if none is failing."""
        if rt.stage != "running" or not rt.unready:
            return None
        now = time.monotonic()
        failing = [c for c in pod["spec"].get("containers") or [] if c["name"] in rt.unready]
        if rt.next_probe <= now:
            for c in failing:
                output = rt.unready[c["name"]]
                output = probe_output(c, rt.ip) if output is None else output
                self._event(pod, "warning", "Unhealthy", f"Readiness probe failed: {output}", c)
            rt.next_probe = now + min((probe_period(c) for c in failing), default=10.0)
        return max(rt.next_probe - now, 0.001)

    def _adopt(self, pod: Obj, node: Obj) -> Runtime:
        """A pod the kubelet has not seen: new, or already running before a restart of kubesim."""
        status = pod.get("status") or {}
        rt = Runtime(start_time=status.get("startTime") or names.rfc3339())
        running = [
            c for c in status.get("containerStatuses") or [] if "running" in c.get("state", {})
        ]
        if (
            status.get("podIP")
            and running
            and len(running) == len(pod["spec"].get("containers") or [])
        ):
            rt.stage, rt.ip = "running", status["podIP"]
            rt.running = {c["name"] for c in running}
            rt.restarts = max(c.get("restartCount", 0) for c in running)
            rt.container_started = running[0]["state"]["running"].get("startedAt", "")
            rt.last_state = running[0].get("lastState") or {}
            self._ips.setdefault(node["metadata"]["name"], set()).add(rt.ip)
            return rt
        rt.due = time.monotonic() + self.ctx.start_delay()
        for c in pod["spec"].get("containers") or []:
            if self._pulls(node, c):
                rt.pulling.add(c["name"])
                self._event(pod, "normal", "Pulling", f'Pulling image "{c.get("image")}"', c)
        return rt

    def _pulls(self, node: Obj, c: Obj) -> bool:
        """Whether the node pulls the container's image, as the kubelet's image manager
        decides: Always does; IfNotPresent only for an image the node lacks (then no
        "Pulling" Event, only "Pulled ... already present"). An invalid reference fails
        before any pull. Never is taken as IfNotPresent: the emulator has no image that a
        node holds without pulling it (a real node would report ErrImageNeverPull)."""
        image = c.get("image") or ""
        if not images.is_valid(image):
            return False
        if c.get("imagePullPolicy") == "Always":
            return True
        return image not in self._pulled.get(node["metadata"]["name"], ())

    def _advance(self, pod: Obj, node: Obj, rt: Runtime) -> None:
        if rt.stage == "creating":
            if not rt.ip:
                rt.ip = self._allocate_ip(node)
            self._start_containers(pod, node, rt)
        elif rt.stage == "pull_error":
            backoff = min(self.ctx.options.image_backoff * 2 ** (rt.pull_failures - 1), MAX_BACKOFF)
            rt.stage, rt.due = "pull_backoff", time.monotonic() + backoff
            for name, image in rt.failing.items():
                container = {"name": name, "image": image}
                self._event(
                    pod, "normal", "BackOff", f'Back-off pulling image "{image}"', container
                )
                self._event(pod, "warning", "Failed", "Error: ImagePullBackOff", container)
        elif rt.stage == "pull_backoff":
            rt.stage, rt.due = "creating", time.monotonic() + self.ctx.start_delay()
            for name, image in rt.failing.items():
                self._event(
                    pod,
                    "normal",
                    "Pulling",
                    f'Pulling image "{image}"',
                    {"name": name, "image": image},
                )
        elif rt.stage == "running" and rt.crash_loop:  # started, and exits again
            self._exit(pod, rt, *rt.crash_loop, final=False)
        elif rt.stage in ("crashed", "crash_backoff"):
            if rt.stage == "crash_backoff":  # as flowcontrol.Backoff.Next at the restart
                rt.crash_backoff = min(rt.crash_backoff * 2, MAX_BACKOFF)
            rt.stage, rt.container_started = "running", names.rfc3339()
            if rt.crash_loop:
                rt.due = time.monotonic() + self.ctx.start_delay()
            for c in pod["spec"].get("containers") or []:
                self._event(
                    pod,
                    "normal",
                    "Pulled",
                    f'Container image "{c.get("image")}" already present on machine',
                    c,
                )
                self._event(pod, "normal", "Created", f"Created container {c['name']}", c)
                self._event(pod, "normal", "Started", f"Started container {c['name']}", c)

    def _start_containers(self, pod: Obj, node: Obj, rt: Runtime) -> None:
        pulled = self._pulled.setdefault(node["metadata"]["name"], set())
        rt.failing = {}
        for c in pod["spec"].get("containers") or []:
            name, image = c["name"], c.get("image") or ""
            if name in rt.running or name in rt.invalid:
                continue
            if not images.is_valid(image):
                rt.invalid[name] = image
                message = f'Failed to apply default image tag "{image}": couldn\'t parse image reference "{image}": invalid reference format'
                self._event(pod, "warning", "InspectFailed", message, c)
                self._event(pod, "warning", "Failed", "Error: InvalidImageName", c)
                continue
            if images.is_missing(image, self.ctx.options.missing_images):
                rt.failing[name] = image
                message = f'Failed to pull image "{image}": rpc error: code = NotFound desc = {images.pull_error(image)}'
                self._event(pod, "warning", "Failed", message, c)
                self._event(pod, "warning", "Failed", "Error: ErrImagePull", c)
                continue
            if name not in rt.pulling:
                self._event(
                    pod,
                    "normal",
                    "Pulled",
                    f'Container image "{image}" already present on machine',
                    c,
                )
            else:
                pulled.add(image)
                took = f"{int(self.ctx.options.pod_start_delay * 1000)}ms"
                size = int(hashlib.sha256(image.encode()).hexdigest()[:6], 16) * 16
                self._event(
                    pod,
                    "normal",
                    "Pulled",
                    f'Successfully pulled image "{image}" in {took} ({took} including waiting). Image size: {size} bytes.',
                    c,
                )
            self._event(pod, "normal", "Created", f"Created container {name}", c)
            self._event(pod, "normal", "Started", f"Started container {name}", c)
            rt.running.add(name)
        if rt.failing:
            rt.pull_failures += 1
            rt.stage, rt.due = "pull_error", time.monotonic() + self.ctx.start_delay()
        elif rt.invalid:
            rt.stage = "invalid"
        else:
            rt.stage, rt.container_started = "running", names.rfc3339()
            rt.ready_at = time.monotonic() + readiness_delay(pod)
            self._finish_resizes(pod, node)

    def _terminate(self, pod: Obj, rt: Runtime) -> float | None:
        """Graceful deletion: the containers get SIGTERM, and the pod goes once they have stopped."""
        now = time.monotonic()
        if rt.stage != "terminating":
            grace = pod["metadata"].get("deletionGracePeriodSeconds")
            if grace is None:
                grace = pod["spec"].get("terminationGracePeriodSeconds", 30)
            for c in pod["spec"].get("containers") or []:
                if c["name"] in rt.running:
                    self._event(pod, "normal", "Killing", f"Stopping container {c['name']}", c)
            stop = self.ctx.start_delay() if rt.running else 0.0
            rt.stage, rt.due = "terminating", now + min(float(grace), stop)
        if rt.due > now:
            return rt.due - now
        meta = pod["metadata"]
        self.ctx.api.delete("pods", meta["namespace"], meta["name"], grace_period_seconds=0)
        return None

    def _forget(self, key: Key) -> None:
        if (uid := self._uid_of.pop(key, None)) is not None:
            self._release(uid)

    def _release(self, uid: str) -> None:
        rt = self.runtimes.pop(uid, None)
        if rt is not None and rt.ip:
            for used in self._ips.values():
                used.discard(rt.ip)

    # -- helpers -------------------------------------------------------------------------------

    def _allocate_ip(self, node: Obj) -> str:
        index = node_index(node["metadata"]["name"])
        used = self._ips.setdefault(node["metadata"]["name"], set())
        for pod in self.ctx.cache.pods_on(node["metadata"]["name"]):
            if ip := pod.get("status", {}).get("podIP"):
                used.add(ip)
        for host in range(2, 255):
            ip = f"10.244.{index}.{host}"
            if ip not in used:
                used.add(ip)
                return ip
        raise RuntimeError(f"no pod IP left on {node['metadata']['name']}")

    def _finish_resizes(self, pod: Obj, node: Obj) -> None:
        """Mounting a claim whose volume grew finishes the file system resize (NodeExpandVolume)."""
        for volume in pod["spec"].get("volumes") or []:
            claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
            pvc = claim and self.ctx.cache.get(
                "persistentvolumeclaims", pod["metadata"]["namespace"], claim
            )
            if (
                not pvc
                or not (cond := condition(pvc, "FileSystemResizePending"))
                or cond.get("status") != "True"
            ):
                continue
            body = copy.deepcopy(pvc)
            wanted = pvc["spec"]["resources"]["requests"]["storage"]
            body["status"]["capacity"] = {
                **(pvc["status"].get("capacity") or {}),
                "storage": wanted,
            }
            body["status"]["conditions"] = [
                c
                for c in pvc["status"].get("conditions") or []
                if c.get("type") != "FileSystemResizePending"
            ]
            if not body["status"]["conditions"]:
                del body["status"]["conditions"]
            body["status"].pop("allocatedResourceStatuses", None)
            try:
                self.ctx.api.update("persistentvolumeclaims", body, subresource="status")
            except Exception as exc:
                if not is_status_error(exc, 404):
                    raise
                continue
            volume_name = pvc["spec"].get("volumeName", claim)
            self.ctx.events.normal(
                pod,
                "FileSystemResizeSuccessful",
                f'MountVolume.NodeExpandVolume succeeded for volume "{volume_name}" {node["metadata"]["name"]}',
                COMPONENT,
                host=node["metadata"]["name"],
            )

    def _event(self, pod: Obj, kind: str, reason: str, message: str, container: Obj) -> None:
        post = self.ctx.events.normal if kind == "normal" else self.ctx.events.warning
        post(
            pod,
            reason,
            message,
            COMPONENT,
            host=pod["spec"].get("nodeName", ""),
            field_path=f"spec.containers{{{container['name']}}}",
        )

    def _write_status(self, pod: Obj, node: Obj, rt: Runtime) -> None:
        status = pod_status(pod, node, rt)
        if status == pod.get("status"):
            return
        try:
            self.ctx.api.update("pods", {**pod, "status": status}, subresource="status")
        except Exception as exc:
            if not is_status_error(exc, 404):
                raise


def readiness_delay(pod: Obj) -> float:
    """The first readiness probe passes after its initial delay (all probes pass here)."""
    delays = [
        (c.get("readinessProbe") or {}).get("initialDelaySeconds", 0)
        for c in pod["spec"].get("containers") or []
    ]
    return float(max(delays, default=0))


def probe_period(container: Obj) -> float:
    return float((container.get("readinessProbe") or {}).get("periodSeconds") or 10)


def probe_output(container: Obj, ip: str) -> str:
    """What the kubelet's prober says of a failing readiness probe of this kind (a container
    without one is taken to have an HTTP probe): pkg/probe/http, tcp, exec, grpc."""
    probe = container.get("readinessProbe") or {}
    if "tcpSocket" in probe:
        port = _port_number(container, probe["tcpSocket"].get("port"))
        return f"dial tcp {ip}:{port}: connect: connection refused"
    if "exec" in probe:
        return ""  # the command's output, which a failing check often leaves empty
    if "grpc" in probe:
        return 'service unhealthy (responded with "NOT_SERVING")'
    return "HTTP probe failed with statuscode: 503"


def _port_number(container: Obj, port: object) -> object:
    """A named port as the kubelet resolves it, from the container's ports."""
    for p in container.get("ports") or []:
        if isinstance(port, str) and p.get("name") == port:
            return p.get("containerPort", port)
    return port
