"""What a diagnosis reads and says: `Observed` in, `Finding`s out (plain data), and the
small readers of objects its rules share (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from controllers.base import Body, CrFields
from controllers.fields import deep_get
from controllers.unready import UNREADY_GRACE_SECONDS
from opsboard.diagnosis.errors import OPERATOR_CLUSTER_ROLE

# Lower ranks are more likely causes and are shown first.
RANK_ENGINE_DOWN = 5
RANK_REFUSED = 10  # a 403 or 422: nothing converges until someone changes something
RANK_FOREIGN_CHILD = 12
RANK_UNREACHABLE = 15
RANK_PODS_REFUSED = 18  # the API server refuses a workload's new pods: none can follow
RANK_PODS = 20
RANK_VOLUME = 25
RANK_ROLLOUT = 30
RANK_MISSING_CHILD = 35
RANK_FINALIZER = 40
RANK_ERROR = 45
RANK_BACKOFF = 50
RANK_QUEUE = 55
RANK_CONDITION = 60
RANK_STALE = 70


class Section(StrEnum):
    """A part of the CR's own page that a finding's advice refers to (the value is its id
    there). The advice does not say where it is: each page that shows it words the pointer
    itself ("below" on the CR's page, a link elsewhere)."""

    HISTORY = "history"  # the change history, whose entries each have a reviewed revert
    TREE = "tree"  # the owner tree, where each pod says whether it is ready

    @property
    def heading(self) -> str:
        """Its name in a sentence: "change history"."""
        return {Section.HISTORY: "change history", Section.TREE: "owner tree"}[self]


@dataclass(frozen=True)
class LogOf:
    """The container log a finding's advice reads: `previous`, the run that ended."""

    pod: str
    container: str
    previous: bool = False


@dataclass(frozen=True)
class Finding:
    rank: int
    code: str  # a stable name for tests and filters: "ImagePullBackOff", "Forbidden", ...
    what: str  # one line: what is wrong
    todo: str  # one line: what to do, without saying where on a page
    subject: str = ""  # the object that causes it: "Pod web-1", "Deployment web"
    see: Section | None = None  # where on the CR's page the advice's object is
    log: LogOf | None = None  # the log the advice says to read, which the page can show


@dataclass(frozen=True)
class ImageChange:
    """An applied audit entry that set an image path of the CR."""

    entry_id: int
    image: str
    username: str
    at: datetime


@dataclass(frozen=True)
class LastRun:
    outcome: str  # ReconcileRun.Outcome value
    error: str
    started_at: datetime


@dataclass(frozen=True)
class EngineState:
    redis_up: bool = True
    watcher_leader: str = ""  # identity of the leading watcher, "" if none
    last_watcher: str = ""  # the freshest watcher heartbeat known, leading or not
    last_watcher_at: datetime | None = None
    standbys: int = 0  # live watchers not leading
    lease_error: str = ""  # why a standby could not take the Lease, if one said
    workers: tuple[str, ...] = ()
    failures: int = 0  # consecutive failures of this key (the backoff step)
    next_retry_at: datetime | None = None  # when the delayed queue sends the key again
    permanent: bool = False  # a user-fixable error: waits for the object to change
    queued_since: datetime | None = None  # the key waits in the queue since then
    running_since: datetime | None = None
    stale_after: float = 60.0  # OPSBOARD_QUEUE_STALE_SECONDS
    temporary_backoff_max: float = 60.0  # OPSBOARD_BACKOFF_TEMPORARY_MAX


@dataclass(frozen=True)
class Observed:
    cr: Body
    objects: list[Body] = field(default_factory=list)  # the owner tree and the claims it mounts
    missing: list[tuple[str, str]] = field(default_factory=list)  # (kind, name) expected
    foreign: list[Body] = field(default_factory=list)  # expected children another owner controls
    unowned: list[Body] = field(default_factory=list)  # expected children no one controls (yet)
    # The Services holding a NodePort the last run was refused, by port: "Service ns/name".
    port_users: dict[int, str] = field(default_factory=dict)
    changed_at: datetime | None = None  # when the mirror last saw the CR change
    fields: CrFields = field(default_factory=CrFields)  # the CR's fields the advice names
    image_changes: list[ImageChange] = field(default_factory=list)  # newest first
    last_run: LastRun | None = None
    engine: EngineState = field(default_factory=EngineState)
    # FailedCreate Events about the StatefulSets and DaemonSets short of pods (short_of_pods)
    refusals: list[Body] = field(default_factory=list)
    running_controllers: tuple[str, ...] = ()  # finalizer domains opsboard's controllers own
    operator_role: str = OPERATOR_CLUSTER_ROLE  # the ClusterRole a 403 says to change
    # When the mirror last saw each object of `objects` change, by uid.
    objects_changed_at: dict[str, datetime] = field(default_factory=dict)
    now: datetime | None = None
    # The cluster's mirrored Nodes, read only when pods wait for one or are on one that
    # stopped reporting, or a DaemonSet selects none (gather._nodes); None then too if the
    # watcher has not listed them (it may not be allowed to).
    nodes: list[Body] | None = None
    # Whether the reader holds a role everywhere: steps on nodes (which belong to no
    # namespace) are then theirs to take, else a cluster administrator's.
    node_rights: bool = True
    unready_grace: float = UNREADY_GRACE_SECONDS  # as the status's (controllers.graces)


def on_nodes(observed: Observed, todo: str) -> str:
    """`todo`, whose steps change nodes, as its reader can act on it: to one with roles in
    some namespaces only, it says who can take those steps."""
    if observed.node_rights:
        return todo
    return (
        f"{todo} Nodes are outside your namespaces: ask a cluster administrator to take "
        "the steps on them."
    )


def name_of(body: Body) -> str:
    return str(deep_get(body, "metadata.name", ""))


def ago(then: datetime | None, now: datetime | None) -> str:
    if then is None or now is None:
        return "unknown"
    seconds = max(0, int((now - then).total_seconds()))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h"


def of_kind(objects: list[Body], kind: str) -> list[Body]:
    return [
        o
        for o in objects
        if o.get("kind") == kind and not deep_get(o, "metadata.deletionTimestamp")
    ]


def in_namespace(obj: Body) -> str:
    """kubectl's namespace flag for `obj`, with its leading space ("" if cluster-scoped)."""
    namespace = deep_get(obj, "metadata.namespace", "")
    return f" -n {namespace}" if namespace else ""
