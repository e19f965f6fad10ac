"""A pod's log, on the page of the CR that owns it: what `kubectl logs` shows, for a person
who has no kubectl. Only a pod in the CR's owner tree (as the mirror has it) is read, so the
page is no way to read other pods; its last LINES lines, of one container, and of the run
that ended when it restarted (a crash loop's cause is there, not in the run starting). Read
from the API server as the person with impersonation on (the cluster's RBAC decides), else as
the web app; what the server refuses is said, not a 500."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from controllers.base import Body
from controllers.fields import deep_get
from opsboard.accounts.kube_identity import KubeIdentity
from opsboard.dashboard import crclient
from opsboard.mirror.models import KubeObject
from opsboard.mirror.selectors import owner_tree

LINES = 200
LIMIT_BYTES = 256 * 1024  # a line can be long; a page of text stays readable
# The whole log, downloaded: as `kubectl logs` gives it, but not without end (a pod that
# writes a lot keeps only its current file on the node anyway).
WHOLE_BYTES = 10 * 1024 * 1024


@dataclass(frozen=True)
class Container:
    name: str
    restarts: int  # > 0: a previous run's log can be read


@dataclass(frozen=True)
class PodLog:
    pod: str
    namespace: str
    container: str
    previous: bool
    containers: list[Container] = field(default_factory=list)
    text: str = ""
    error: str = ""

    @property
    def choices(self) -> bool:
        """Whether there is another log of the pod to read: a container, or a previous run."""
        return len(self.containers) > 1 or any(c.restarts for c in self.containers)

    @property
    def filename(self) -> str:
        """The name the whole log downloads as: nginx-5d9f-x2b4k.nginx.log."""
        return f"{self.pod}.{self.container}{'.previous' if self.previous else ''}.log"

    @property
    def command(self) -> str:
        """The same read with kubectl."""
        previous = " --previous" if self.previous else ""
        return (
            f"kubectl logs -n {self.namespace} {self.pod} -c {self.container} "
            f"--tail {LINES}{previous}"
        )


def owned_pod(cr: KubeObject, name: str) -> KubeObject | None:
    """The pod `name` of `cr`'s owner tree, if it is one."""
    return next((o for o in owner_tree(root=cr).walk() if o.kind == "Pod" and o.name == name), None)


def containers_of(pod: Body) -> list[Container]:
    """The pod's containers, in its spec's order, with their restarts."""
    restarts = {
        s.get("name"): int(s.get("restartCount") or 0)
        for s in deep_get(pod, "status.containerStatuses", []) or []
    }
    return [
        Container(str(c.get("name")), restarts.get(c.get("name"), 0))
        for c in deep_get(pod, "spec.containers", []) or []
    ]


def read(
    pod: KubeObject, *, container: str | None, previous: bool, as_user: KubeIdentity | None,
    whole: bool = False,
) -> PodLog:  # fmt: skip
    """The log asked for, its last LINES lines, or with `whole` all of it (to WHOLE_BYTES);
    an unknown container is the first one (the pod's default)."""
    containers = containers_of(pod.body)
    names = [c.name for c in containers]
    chosen = container if container in names else (names[0] if names else "")
    log = PodLog(pod.name, pod.namespace, chosen, previous, containers)
    if not chosen:
        return replace(log, error="The pod has no containers.")
    try:
        text = crclient.pod_log(
            pod.namespace, pod.name, container=chosen, previous=previous,
            lines=None if whole else LINES, limit_bytes=WHOLE_BYTES if whole else LIMIT_BYTES,
            as_user=as_user,
        )  # fmt: skip
    except crclient.ClusterError as exc:
        return replace(log, error=str(exc))
    return replace(log, text=text)
