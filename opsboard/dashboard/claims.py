"""Volumes only grow. A kind's storage field (a BookStore's spec.bookDB.dbSize) set below
what its claims already request would be taken by the API server and refused by the operator
afterwards (Kubernetes cannot shrink a PersistentVolumeClaim), the CR Degraded with a change
applied and audited. The form, the review and the apply refuse it first, against the
claims the CR reports in its status (`status.claims`: name and requested size each)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from controllers.base import Body
from controllers.resources import parse_quantity
from opsboard.dashboard.kinds import value_at


def _size(value: Any) -> Decimal | None:
    try:
        return parse_quantity(value) if isinstance(value, str | int) else None
    except ValueError:
        return None


def shrink_refusal(path: str, value: Any, cr: Body, *, advise: bool = True) -> str:
    """Why `value` for the storage field `path` would shrink a claim of `cr` (and, `advise`d,
    the least size allowed); "" if it would not (or is no size at all: the grammar is the
    form's and the API server's)."""
    wanted = _size(value)
    if wanted is None:
        return ""
    larger = []
    for claim in value_at(cr, "status.claims") or []:
        requested = claim.get("requested") if isinstance(claim, dict) else None
        if (have := _size(requested)) is not None and have > wanted:
            larger.append((str(claim.get("name")), str(requested), have))
    if not larger:
        return ""
    biggest = max(larger, key=lambda claim: claim[2])[1]
    names = ", ".join(f"{name} ({requested})" for name, requested, _ in sorted(larger))
    why = (
        f"{path} {value} is smaller than the claims {names}: Kubernetes cannot shrink a "
        "PersistentVolumeClaim."
    )
    return f"{why} Give {biggest} or more." if advise else why
