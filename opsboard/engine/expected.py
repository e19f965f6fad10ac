"""Which CR expects a child of each name: the children it keeps, by the operator's naming
convention (each controller's `expected_children`, from its pure desired-state code).

A child maps to its CR through its controller ownerReference (opsboard.engine.mapping),
but a child the CR does not own — someone's object of the name it wants, which the next
reconcile adopts, or cannot — has none: its deletion woke nobody until the resync, and
the CR stayed without its child for up to ten minutes. With this index such a change
maps to the CR that expects it by name: one dict lookup, no request.

Kept by the watcher from the primary objects it mirrors; started from the mirror, so a
watcher that resumes knows the CRs that have not changed since.
"""

from __future__ import annotations

from collections.abc import Sequence

from controllers.base import Body, Controller, Key, Kind
from opsboard.mirror.models import KubeObject
from opsboard.mirror.writer import DELETED, Change

# A child's kind (group and kind: a Kind's hash is dearer), namespace and name.
Name = tuple[str, str, str, str]


def _name(kind: Kind, namespace: str, name: str) -> Name:
    return (kind.group, kind.kind, namespace, name)


class ExpectedChildren:
    """child (kind, namespace, name) → the key of the CR that expects it. Two CRs of one
    namespace that expect the same child (a Memcached and a WebServer of one name, whose
    ownership_problem tells it) map it to the one learnt last."""

    LOAD_CHUNK = 2_000  # mirror rows read at a time at start

    def __init__(self, controllers: Sequence[Controller]) -> None:
        self._controllers = {(c.primary.api_version, c.primary.kind): c for c in controllers}
        self._keys: dict[Name, tuple[Controller, Key]] = {}  # child → the CR that expects it
        self._names: dict[Key, tuple[Name, ...]] = {}  # CR → its children's names, to forget

    def load(self) -> None:
        """Learns every primary object in the mirror (at start: one query, no request).
        Only the fields a naming convention may read: not the status, often the most."""
        for (api_version, kind), controller in self._controllers.items():
            rows = KubeObject.objects.filter(api_version=api_version, kind=kind).values_list(
                "namespace", "name", "uid", "labels", "annotations", "spec"
            )
            for namespace, name, uid, labels, notes, spec in rows.iterator(
                chunk_size=self.LOAD_CHUNK
            ):
                meta = {
                    "name": name,
                    "namespace": namespace,
                    "uid": uid,
                    "labels": labels,
                    "annotations": notes,
                }
                body = {"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": spec}
                self._learn(controller, body)

    def knows(self, key: Key) -> bool:
        return key in self._names

    def seen(self, controller: Controller, change: Change) -> None:
        """Learns (or forgets) the children a primary object's change names."""
        if change.type == DELETED:
            self._forget(_key(controller, change.body))
        else:
            self._learn(controller, change.body)

    def expecting(self, change: Change) -> tuple[Controller, Key] | None:
        """The CR that expects the child of this change by its name, if one does."""
        meta = change.body["metadata"]
        return self._keys.get(_name(change.kind, meta.get("namespace", ""), meta["name"]))

    def _learn(self, controller: Controller, body: Body) -> None:
        key = _key(controller, body)
        self._forget(key)
        try:
            children = controller.expected_children(body)
        except (KeyError, TypeError, ValueError):  # a CR its convention cannot read
            return
        names = tuple(
            _name(child.kind, key.namespace, child.name)
            for child in children
            if child.kind in controller.owns  # only owned kinds are watched
        )
        for name in names:
            self._keys[name] = (controller, key)
        self._names[key] = names

    def _forget(self, key: Key) -> None:
        for name in self._names.pop(key, ()):
            if (found := self._keys.get(name)) is not None and found[1] == key:
                del self._keys[name]


def _key(controller: Controller, body: Body) -> Key:
    meta = body["metadata"]
    return Key(controller.name, meta.get("namespace", ""), meta["name"])
