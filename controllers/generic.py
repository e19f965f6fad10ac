"""A kind opsboard runs no operator for, shown and scaled generically: any CRD with a scale
subresource, named in OPSBOARD_GENERIC_KINDS. Its Kind and paths come from the CRD."""

from __future__ import annotations

from controllers.base import Body, Context, Controller, CrFields, ExpectedChild, Kind, Result


def _nothing(ctx: Context) -> Result:  # never called: the engine runs no generic kind
    return Result.done()


def _no_children(cr: Body) -> list[ExpectedChild]:
    return []


def served_version(crd: Body) -> Body:
    """The storage version's entry of a CRD (else the first served one)."""
    versions = crd.get("spec", {}).get("versions") or [{}]
    return next((v for v in versions if v.get("storage")), versions[0])


def kind_of(crd: Body) -> Kind:
    spec = crd["spec"]
    return Kind(
        spec["group"],
        served_version(crd).get("name", "v1"),
        spec["names"]["kind"],
        spec["names"]["plural"],
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
    )


def generic_controller(crd: Body) -> Controller:
    """A Controller with no reconcile: named for the kind's plural, its size the CRD's
    specReplicasPath (None without a scale subresource)."""
    kind = kind_of(crd)
    scale = served_version(crd).get("subresources", {}).get("scale") or {}
    return Controller(
        name=kind.plural,
        primary=kind,
        owns=(),
        reconcile=_nothing,
        expected_children=_no_children,
        fields=CrFields(size=(scale.get("specReplicasPath") or "").strip(".") or None),
    )
