"""The kinds the dashboard shows: every controller registered with the engine, with the
schema, printer columns and scale paths of its CRD, so a new operator needs no UI change.

CRD manifests are read once from k8s/crd/ (shipped with the app), never from the API
server on a page load.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django.http import Http404

from controllers.base import Body, Controller, Kind
from controllers.generic import generic_controller, served_version
from opsboard.engine.registered import controllers
from opsboard.mirror.models import KubeObject

CRD_DIR = Path(settings.BASE_DIR) / "k8s" / "crd"


# A printer column the list can sort by: a plain path into spec or status.
_ORDERABLE_PATH = re.compile(r"\.(spec|status)(\.[A-Za-z_][A-Za-z0-9_]*)+")


@dataclass(frozen=True)
class Column:
    name: str
    json_path: str  # ".spec.size"
    type: str = "string"
    sort_key: str = ""  # "col-0": the list's ?sort= value for this column

    @property
    def of_status(self) -> bool:
        """Read from the status (a NodePort, a count): the detail page's status lists it."""
        return self.json_path.startswith(".status.")

    @property
    def order_field(self) -> str | None:
        """The mirror's JSON lookup to sort by ("spec__size"), if the path is a plain one."""
        if not _ORDERABLE_PATH.fullmatch(self.json_path):
            return None
        return "__".join(self.json_path.strip(".").split("."))


@dataclass(frozen=True)
class KindInfo:
    controller: Controller
    columns: tuple[Column, ...] = ()
    spec_schema: dict[str, Any] = field(default_factory=dict)
    replicas_path: str | None = None  # from the scale subresource: "spec.size"
    # What "ready of desired" counts: the scale subresource's paths, else the printer
    # columns named Ready and Desired (a DaemonSet-like kind: status.numberReady).
    ready_path: str | None = None  # "status.readyReplicas"
    desired_path: str | None = None  # "spec.size", "status.desiredNumberScheduled"
    generic: bool = False  # a CRD opsboard runs no operator for (OPSBOARD_GENERIC_KINDS)

    def column_order(self, sort_key: str) -> str | None:
        """The JSON lookup behind a printer column's sort key, if it is sortable."""
        return next((c.order_field for c in self.columns if c.sort_key == sort_key), None)

    @property
    def name(self) -> str:
        return self.controller.name

    @property
    def kind(self) -> Kind:
        return self.controller.primary

    @property
    def devices_path(self) -> str | None:
        """The CR's count of devices each pod requests ("spec.deviceCount"), if it has one:
        the field the Diagnosis names for pods that no node has the devices for."""
        path = self.controller.fields.requests
        return path if path and self.field_schema(path).get("type") == "integer" else None

    def field_schema(self, path: str) -> dict[str, Any]:
        """The OpenAPI schema of a dotted spec path ("spec.size"), {} if unknown."""
        node: dict[str, Any] = {"properties": {"spec": self.spec_schema}}
        for part in path.split("."):
            node = node.get("properties", {}).get(part, {})
        return node


def value_at(body: Body, path: str | None) -> Any:
    """Follow a dotted path ("spec.size" or kubectl's ".spec.size") into an object."""
    if not path:
        return None
    node: Any = body
    for part in path.strip(".").split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def _crd_versions() -> dict[tuple[str, str], dict[str, Any]]:
    """(group, kind) → the served version entry of its CRD."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(CRD_DIR.glob("*.y*ml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            for version in spec.get("versions", []):
                if version.get("storage") or version.get("served"):
                    found[(spec["group"], spec["names"]["kind"])] = version
    return found


# Printer columns the list shows in its own way: its Ready bar, Image and Age columns.
_LIST_OWN_COLUMNS = ("ready", "image", "age")


def _kind_info(controller: Controller, version: dict[str, Any]) -> KindInfo:
    printer = version.get("additionalPrinterColumns", [])
    by_name = {c["name"].lower(): c["jsonPath"].strip(".") for c in printer}
    printed = [
        c
        for c in printer
        if c["name"].lower() not in _LIST_OWN_COLUMNS
        and c["jsonPath"] != ".metadata.creationTimestamp"
    ]
    columns = tuple(
        Column(c["name"], c["jsonPath"], c.get("type", "string"), sort_key=f"col-{i}")
        for i, c in enumerate(printed)
    )
    schema = version.get("schema", {}).get("openAPIV3Schema", {})
    scale = version.get("subresources", {}).get("scale", {})
    replicas_path = (scale.get("specReplicasPath") or "").strip(".") or None
    return KindInfo(
        controller=controller,
        columns=columns,
        spec_schema=schema.get("properties", {}).get("spec", {}),
        replicas_path=replicas_path,
        ready_path=(scale.get("statusReplicasPath") or "").strip(".") or by_name.get("ready"),
        desired_path=replicas_path or by_name.get("desired") or controller.fields.size,
    )


def _controllers() -> list[Controller]:
    return list(controllers().values())


@functools.cache
def _registered_kinds() -> dict[str, KindInfo]:
    versions = _crd_versions()
    kinds = {}
    for controller in _controllers():
        version = versions.get((controller.primary.group, controller.primary.kind), {})
        kinds[controller.name] = _kind_info(controller, version)
    return kinds


def _generic_kinds() -> dict[str, KindInfo]:
    """The kinds of OPSBOARD_GENERIC_KINDS whose CRD the watcher has mirrored."""
    names = settings.OPSBOARD_GENERIC_KINDS
    if not names:
        return {}
    crds = KubeObject.objects.filter(kind="CustomResourceDefinition", name__in=names).values_list(
        "body", flat=True
    )
    kinds = {}
    for crd in crds:
        controller = generic_controller(crd)
        kinds[controller.name] = replace(_kind_info(controller, served_version(crd)), generic=True)
    return kinds


class _AllKinds:
    """all_kinds(): the registered controllers' kinds, then the generic ones, read once
    all of them are mirrored (until then, on each call: one indexed query)."""

    def __init__(self) -> None:
        self._generic: dict[str, KindInfo] | None = None

    def __call__(self) -> dict[str, KindInfo]:
        generic = self._generic
        if generic is None:
            generic = _generic_kinds()
            if len(generic) >= len(settings.OPSBOARD_GENERIC_KINDS):
                self._generic = generic
        registered = _registered_kinds()
        return {**registered, **{k: v for k, v in generic.items() if k not in registered}}

    def cache_clear(self) -> None:
        _registered_kinds.cache_clear()
        self._generic = None


all_kinds = _AllKinds()


def kind_get(name: str) -> KindInfo:
    try:
        return all_kinds()[name]
    except KeyError:
        raise Http404(f"No controller named {name!r}") from None
