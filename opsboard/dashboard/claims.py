"""Volumes only grow. A kind's storage field (a BookStore's spec.bookDB.dbSize) set below
what its claims already request would be taken by the API server and refused by the operator
afterwards (Kubernetes cannot shrink a PersistentVolumeClaim), the CR Degraded with a change
applied and audited. The form, the review and the apply refuse it first, against the
claims the CR reports in its status (`status.claims`: name and requested size each)."""

from __future__ import annotations

from typing import Any

from controllers.base import Body
from controllers.bookstore.quantity import larger_claims, parse_quantity
from opsboard.dashboard.kinds import value_at


def shrink_refusal(path: str, value: Any, cr: Body, *, advise: bool = True) -> str:
    """Why `value` for the storage field `path` would shrink a claim of `cr` (and, `advise`d,
    the least size allowed); "" if it would not (or is no size at all: the grammar is the
    form's and the API server's). The operator's own rule (`larger_claims`), on the claims
    as the CR reports them."""
    if (wanted := parse_quantity(value)) is None:
        return ""
    reported = [c for c in value_at(cr, "status.claims") or [] if isinstance(c, dict)]
    found = larger_claims(wanted, ((str(c.get("name")), c.get("requested")) for c in reported))
    if found is None:
        return ""
    names, biggest = found
    why = (
        f"{path} {value} is smaller than the claims {names}: Kubernetes cannot shrink a "
        "PersistentVolumeClaim."
    )
    return f"{why} Give {biggest} or more." if advise else why
