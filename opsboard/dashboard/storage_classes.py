"""Whether the claims a review grows can grow. The API server takes a larger volume size on
the CR, but the claims grow only if their StorageClass allows expansion: else the operator's
growth is refused by admission and the CR goes Degraded (VolumeExpansionFailed) after the
change was applied. The review says so first, with what a cluster administrator runs; the
change may still be applied (the operator grows the claims once the class allows it)."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from controllers.base import Body
from controllers.refusals import allow_expansion
from opsboard.dashboard import crclient
from opsboard.dashboard.kinds import value_at
from opsboard.mirror.selectors import claim_classes

log = logging.getLogger(__name__)


def growth_warnings(cr: Body) -> list[str]:
    """What keeps the claims `cr` reports (`status.claims`) from growing, a line per
    StorageClass: one that does not allow expansion, one that does not exist, or one opsboard
    could not read. [] when every class allows it, or no claim is known yet."""
    reported = value_at(cr, "status.claims") or []
    names = [str(c["name"]) for c in reported if isinstance(c, dict) and c.get("name")]
    namespace = str(value_at(cr, "metadata.namespace") or "")
    by_class: dict[str, list[str]] = {}
    # A claim of no class was bound by hand: it cannot grow either, but has no class to name.
    for claim, storage_class in sorted(claim_classes(namespace=namespace, names=names).items()):
        if storage_class:
            by_class.setdefault(storage_class, []).append(claim)
    warnings = []
    for storage_class, claims in sorted(by_class.items()):
        try:
            found: Body | str | None = crclient.storage_class(storage_class)
        except crclient.ClusterError as exc:
            log.warning("StorageClass %s not read for a review: %s", storage_class, exc)
            found = (
                "the web app may not read StorageClasses (the install's "
                f"k8s/deploy/web-rbac.yaml grants it; the API server said: {exc.forbidden})"
                if exc.forbidden
                else str(exc)
            )
        if said := expansion_warning(str(cr.get("kind", "CR")), storage_class, claims, found):
            warnings.append(said)
    return warnings


def expansion_warning(
    kind: str, storage_class: str, claims: list[str], found: Body | str | None
) -> str:
    """What the review says of `storage_class`, as `found` (the class, None if there is
    none, or why it could not be read) lets `claims` grow; "" if it does."""
    these = f"the claim {claims[0]}" if len(claims) == 1 else "the claims " + ", ".join(claims)
    them = "it" if len(claims) == 1 else "them"
    if isinstance(found, str):
        return f"Whether StorageClass {storage_class} lets {these} grow was not checked: {found}"
    refused = (
        f"the API server will refuse to grow {them}, and the {kind} will be Degraded "
        "(VolumeExpansionFailed)"
    )
    if found is None:
        return (
            f"StorageClass {storage_class} of {these} does not exist: {refused} until the "
            "class is made again with allowVolumeExpansion: true."
        )
    if isinstance(found, Mapping) and found.get("allowVolumeExpansion") is True:
        return ""
    return (
        f"StorageClass {storage_class} of {these} does not allow volumes to grow "
        f"(allowVolumeExpansion): {refused} until a cluster administrator allows it "
        f"({allow_expansion(storage_class)}), if its provisioner can grow volumes. The "
        f"operator grows {them} then."
    )
