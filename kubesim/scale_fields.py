"""managedFields of a write to the scale subresource, as kube-apiserver v1.28 keeps them.

The server tracks the write on the Scale, not on the object (apimachinery's ScaleHandler):
the entries that own the object's replicas become entries of the Scale owning its
spec.replicas, under autoscaling/v1 (an Update's identity names that version, an Apply's
none); the write's manager, conflicts and forced takes are worked out among those; then the
Scale's entries go back. An entry of the object keeps its replicas if the Scale kept its
identity (an Apply's), else loses them; every Scale entry left owning replicas without such
a twin comes back as a new entry of its own, without a time. So a scale write splits an
Update entry that owned replicas in two, the same identity twice, until the next write's
decoding keeps the last (managedfields.decoded). The Scale's other quirks are kept too: an
Update records nothing when no one owns replicas (nothing to track), and an apply then
first gives them to `before-first-apply`, whose Update entry it conflicts with. And v1.28
fails (500) an apply to a custom resource's Scale that changes replicas or finds them
untracked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubesim import apply_ownership, errors, managedfields
from kubesim.managedfields import Entry, Fields

SCALE_VERSION = "autoscaling/v1"
Identity = tuple[str, str, str, str]  # managedfields.identity's
_SCALE = managedfields.Kind(resource="scale", custom=False, schema=None, status_reset=False)
_SCALE_REPLICAS: Fields = {"f:spec": {"f:replicas": {}}}


@dataclass(frozen=True, slots=True)
class ScaleWrite:
    """A write to the scale subresource: who, and the Scale's replicas before and after."""

    manager: str
    applied: dict[str, Any] | None  # an apply's configuration, else an Update
    force: bool
    before: int
    after: int


def replicas_fields(path: str) -> Fields:
    """The object's replicas path (".spec.replicas") as a field set."""
    node: Fields = {}
    for key in reversed(path.strip(".").split(".")):
        node = {"f:" + key: node}
    return node


def write(
    entries: list[Entry],
    replicas: Fields,
    group: str,
    version: str,
    scale: ScaleWrite,
    *,
    custom: bool = False,
) -> tuple[list[Entry], bool]:
    """The object's entries after the write, and whether its replicas go (the applier alone
    owned them and dropped them). Raises the 409 of an apply's conflicts, and for a custom
    resource (`custom`) the 500s of v1.28's apply to its Scale."""
    parent = [e for e in managedfields.decoded(entries) if _known(e, group)]
    # ToSubresource: the Scale's entries, each owning replicas (True) or, the applier's
    # only, other fields of the Scale it applied (False)
    owners = {_scale_identity(e): True for e in parent if _owns(e, replicas)}
    remove = False
    if scale.applied is None:
        if owners and scale.after != scale.before:  # none: the Update is not tracked
            owners = {(scale.manager, "Update", SCALE_VERSION, "scale"): True}
    else:
        mine: Identity = (scale.manager, "Apply", "", "scale")
        if not owners and custom:
            raise errors.unconverted(
                "failed to create manager for existing fields: " + _cr_bug("live", "/")
            )
        if not owners and scale.before:
            owners = {(managedfields.BEFORE_FIRST_APPLY, "Update", SCALE_VERSION, "scale"): True}
        applied = managedfields.applied_fields(_SCALE, scale.applied)
        sets = _owns({"fieldsV1": applied}, _SCALE_REPLICAS)
        others = [o for o, owns in owners.items() if owns and o != mine]
        if sets and scale.after != scale.before:
            if others and not scale.force:
                raise _conflicts(others)
            if custom:
                meta = scale.applied.get("metadata") or {}
                named = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
                raise errors.unconverted(_cr_bug("new", named))
            owners = {}
        else:
            remove = not sets and owners.get(mine, False) and not others
            owners.pop(mine, None)
        if applied is not None:  # an entry, even without replicas (`spec: {}`)
            owners[mine] = sets
    return _to_parent(parent, owners, replicas, version), remove


def _to_parent(
    parent: list[Entry], owners: dict[Identity, bool], replicas: Fields, version: str
) -> list[Entry]:
    """ToParent: an entry of the object that owned replicas keeps them if the Scale kept its
    identity (owning replicas or not), else loses them; the Scale's other owners of replicas
    come back as entries of their own."""
    left = dict(owners)
    out: list[Entry] = []
    for entry in parent:
        kept = (
            not _owns(entry, replicas) or left.pop(managedfields.identity(entry), None) is not None
        )
        if kept:
            out.append(entry)
        elif (
            rest := managedfields.difference(entry.get("fieldsV1") or None, replicas)
        ) is not None:
            out.append({**entry, "fieldsV1": rest})
    for (manager, operation, _, subresource), owns in left.items():
        if not owns:
            continue
        out.append(
            managedfields.new_entry(manager, operation, version, replicas, subresource=subresource)
        )
    out.sort(key=managedfields.sort_key)
    return out


def _cr_bug(which: str, named: str) -> str:
    """v1.28's fieldmanager of a custom resource's Scale converts the Scale as a custom
    resource, and fails: when an apply there changes replicas, or finds them untracked."""
    return (
        f"failed to convert {which} object ({named}; autoscaling/v1, Kind=Scale) to proper "
        "version: request to convert CR to an invalid group/version: autoscaling/v1"
    )


def _conflicts(owners: list[Identity]) -> Exception:
    found = []
    for manager, operation, _, subresource in owners:
        entry: Entry = {"manager": manager, "operation": operation, "apiVersion": SCALE_VERSION}
        if subresource:
            entry["subresource"] = subresource
        found.append(apply_ownership.conflict_with(entry, ".spec.replicas"))
    return apply_ownership.conflict_error(sorted(found, key=lambda c: c.order))


def _scale_identity(entry: Entry) -> Identity:
    """The identity an entry of the object has as the Scale's: an Update's in its version."""
    manager, operation, _, subresource = managedfields.identity(entry)
    return (manager, operation, SCALE_VERSION if operation == "Update" else "", subresource)


def _known(entry: Entry, group: str) -> bool:
    """Whether the object's replicas path is known for the entry's version (else dropped)."""
    return str(entry.get("apiVersion", "")).rpartition("/")[0] == group


def _owns(entry: Entry, replicas: Fields) -> bool:
    node: Any = entry.get("fieldsV1")
    want: Any = replicas
    while want:
        (key,) = want
        if not isinstance(node, dict) or key not in node:
            return False
        node, want = node[key], want[key]
    return isinstance(node, dict) and (not node or "." in node)
