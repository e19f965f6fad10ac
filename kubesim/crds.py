"""CustomResourceDefinitions: validation, status conditions, and serving what they define."""

from __future__ import annotations

import re
from typing import Any

from kubesim.errors import FieldError, GoLiteral
from kubesim.jsonutil import now
from kubesim.resources import ALL_VERBS, Registry, ResourceType

CRD = "customresourcedefinitions.apiextensions.k8s.io"
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"

_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(name: str) -> tuple[int, int, int, str]:
    """Kubernetes' version order: GA, then beta, then alpha, newest first; others last."""
    m = _VERSION.match(name)
    if not m:
        return (3, 0, 0, name)
    major, stage, minor = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -major, -minor, name)


def validate(crd: dict[str, Any]) -> list[FieldError]:
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    errors: list[FieldError] = []
    if not spec.get("group"):
        errors.append(FieldError("Required", "spec.group"))
    for f in ("plural", "kind"):
        if not names.get(f):
            errors.append(FieldError("Required", f"spec.names.{f}"))
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        errors.append(
            FieldError(
                "Unsupported",
                "spec.scope",
                spec.get("scope") or "",
                'supported values: "Cluster", "Namespaced"',
            )
        )
    name = crd["metadata"].get("name", "")
    if names.get("plural") and spec.get("group") and name != f"{names['plural']}.{spec['group']}":
        errors.append(
            FieldError("Invalid", "metadata.name", name, 'must be spec.names.plural+"."+spec.group')
        )
    versions = spec.get("versions") or []
    if not versions:
        errors.append(
            FieldError(
                "Invalid",
                "spec.versions",
                None,
                "must have exactly one version marked as storage version",
            )
        )
    elif sum(1 for v in versions if v.get("storage")) != 1:
        errors.append(
            FieldError(
                "Invalid",
                "spec.versions",
                GoLiteral("[]apiextensions.CustomResourceDefinitionVersion{...}"),
                "must have exactly one version marked as storage version",
            )
        )
    for i, v in enumerate(versions):
        sch = (v.get("schema") or {}).get("openAPIV3Schema")
        if sch is None:
            errors.append(
                FieldError(
                    "Required",
                    f"spec.versions[{i}].schema.openAPIV3Schema",
                    detail="schemas are required",
                )
            )
    return errors


def prepare_create(crd: dict[str, Any]) -> None:
    spec = crd.setdefault("spec", {})
    names = spec.setdefault("names", {})
    if names.get("kind"):
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")
    spec.setdefault("conversion", {"strategy": "None"})
    storage = [v.get("name") for v in spec.get("versions") or [] if v.get("storage")]
    crd["status"] = {
        "conditions": [],
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": storage[:1],
    }


def _condition(type_: str, status: str, reason: str, message: str) -> dict[str, Any]:
    return {
        "type": type_,
        "status": status,
        "lastTransitionTime": now(),
        "reason": reason,
        "message": message,
    }


def mark_established(crd: dict[str, Any]) -> None:
    names = dict(crd["spec"]["names"])
    crd["status"]["acceptedNames"] = names
    crd["status"]["conditions"] = [
        _condition("NamesAccepted", "True", "NoConflicts", "no conflicts found"),
        _condition(
            "Established", "True", "InitialNamesAccepted", "the initial names have been accepted"
        ),
    ]


def mark_terminating(crd: dict[str, Any]) -> None:
    conds = crd.setdefault("status", {}).setdefault("conditions", [])
    conds[:] = [c for c in conds if c.get("type") != "Terminating"]
    conds.append(
        _condition(
            "Terminating",
            "True",
            "InstanceDeletionInProgress",
            "CustomResource deletion is in progress",
        )
    )


def resource_key(crd: dict[str, Any]) -> str:
    spec = crd.get("spec") or {}
    return f"{spec['names']['plural']}.{spec['group']}"


def register(registry: Registry, crd: dict[str, Any]) -> None:
    spec = crd["spec"]
    names = spec["names"]
    served = [v for v in spec.get("versions") or [] if v.get("served", True)]
    if not served:
        registry.remove(resource_key(crd))
        return
    storage = next((v for v in spec["versions"] if v.get("storage")), served[0])
    versions = sorted((v["name"] for v in served), key=version_priority)
    info = {}
    for v in served:
        info[v["name"]] = {
            "schema": (v.get("schema") or {}).get("openAPIV3Schema"),
            "columns": v.get("additionalPrinterColumns"),
        }
    subs = storage.get("subresources") or {}
    scale = subs.get("scale")
    rt = ResourceType(
        group=spec["group"],
        version=versions[0],
        plural=names["plural"],
        singular=names.get("singular") or names["kind"].lower(),
        kind=names["kind"],
        namespaced=spec.get("scope") == "Namespaced",
        short_names=tuple(names.get("shortNames") or ()),
        categories=tuple(names.get("categories") or ()),
        verbs=ALL_VERBS,
        status="status" in subs,
        scale=scale is not None,
        tracks_generation=True,
        versions=tuple(versions),
        version_info=info,
        crd=crd["metadata"]["name"],
        preserve_unknown=False,
        returns_deleted=True,  # apiextensions' customresource store sets ReturnDeletedObject
    )
    if scale:
        rt.spec_replicas_path = scale.get("specReplicasPath", ".spec.replicas")
        rt.status_replicas_path = scale.get("statusReplicasPath", ".status.replicas")
        rt.label_selector_path = scale.get("labelSelectorPath")
    registry.add(rt)


def unregister(registry: Registry, crd: dict[str, Any]) -> None:
    registry.remove(resource_key(crd))
