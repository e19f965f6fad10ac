"""Storage sizes ("2Gi", "500M", "1.5Gi") as exact numbers of bytes (pure): the CR's, which
its CRD's pattern keeps to whole suffixes, and the API server's, read in any form it prints."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from controllers import resources

# A storage size: a non-negative decimal with an optional binary or decimal SI suffix. The
# CRD carries the same pattern (RE2 and Python agree on it).
QUANTITY_PATTERN = r"^(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$"


def parse_quantity(text: str | int | None) -> Decimal | None:
    """The size in bytes, or None when `text` is absent or no quantity. One grammar with the
    pods' resources (`controllers.resources`): a volume's capacity the server prints with an
    exponent ("1e9") or in millis is still a size."""
    if text is None:
        return None
    try:
        return resources.parse_quantity(text)
    except ValueError:
        return None


def larger_claims(size: Decimal, claims: Iterable[tuple[str, Any]]) -> tuple[str, Any] | None:
    """Of `claims` (name, requested size), those asking for more than `size`, named as
    "data-shop-db-0 (2Gi), ...", and the largest request: what a dbSize of `size` would have
    to shrink, which Kubernetes cannot. None if no claim is larger."""
    larger = [
        (name, requested)
        for name, requested in claims
        if (have := parse_quantity(requested)) is not None and have > size
    ]
    if not larger:
        return None
    biggest = max(larger, key=lambda claim: parse_quantity(claim[1]) or 0)[1]
    return ", ".join(f"{name} ({requested})" for name, requested in sorted(larger)), biggest
