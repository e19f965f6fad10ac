"""Storage sizes ("2Gi", "500M", "1.5Gi") as exact numbers of bytes (pure): the CR's, which
its CRD's pattern keeps to whole suffixes, and the API server's, read in any form it prints."""

from __future__ import annotations

from decimal import Decimal

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
