"""Why a CR cannot be reconciled as asked, as (condition reason, message for a person)."""

from __future__ import annotations

from controllers.base import Body
from controllers.fields import controlling_ref
from controllers.images import is_valid_image, name_too_long

Problem = tuple[str, str]
INVALID_SPEC = "InvalidSpec"
CHILD_CONFLICT = "ChildConflict"
PODS_REFUSED = "PodsRefused"  # the API server refuses a workload's pods (a quota)
# A run that failed (a write refused): set by the engine (runner.degrade), not by a controller.
RECONCILE_FAILED = "ReconcileFailed"


def spec_problem(
    *, image: str, size: int, size_field: str, resources: str | None = None
) -> Problem | None:
    """What is wrong with a spec that the API should have rejected (a CRD without validation).

    `resources`: what `controllers.resources.resources_problem` found, which no CRD can
    check (a request above its limit) and the API server would refuse in the child.
    """
    if not is_valid_image(image):
        why = name_too_long(image) or "not a valid image reference"
        return INVALID_SPEC, f"spec.image: Invalid value: {image!r}: {why}"
    if size < 0:
        return (
            INVALID_SPEC,
            f"{size_field}: Invalid value: {size}: must be greater than or equal to 0",
        )
    return (INVALID_SPEC, resources) if resources else None


def ownership_problem(cr: Body, child: Body | None, *, kind: str) -> Problem | None:
    """A child of the same name that another object controls: never take it over.

    (A Memcached and a WebServer of one name in one namespace would both want its Deployment.)
    An existing child with no controller is adopted, as controller-runtime does.
    """
    if child is None:
        return None
    owner = controlling_ref(child["metadata"].get("ownerReferences"))
    if owner is None or owner.get("uid") == cr["metadata"]["uid"]:
        return None
    return CHILD_CONFLICT, (
        f"{kind} {child['metadata']['name']} exists and is controlled by {owner.get('kind')} "
        f"{owner.get('name')}: rename this {cr['kind']} or remove that {kind}"
    )
