"""Kubernetes resource quantities ("2Gi", "500M", "1.5Gi") as exact numbers of bytes (pure)."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_SUFFIXES = {
    "": 1,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
}
# A storage size: a non-negative decimal with an optional binary or decimal SI suffix. The
# CRD carries the same pattern (RE2 and Python agree on it).
QUANTITY_PATTERN = r"^(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$"
_QUANTITY_RE = re.compile(r"^((?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+))([KMGTPE]i|[kMGTPE])?$")


def parse_quantity(text: str | int | None) -> Decimal | None:
    """The quantity in its base unit, or None when `text` is not a size we understand."""
    if isinstance(text, int):
        return Decimal(text)
    match = _QUANTITY_RE.match(text or "")
    if match is None:
        return None
    try:
        return Decimal(match.group(1)) * _SUFFIXES[match.group(2) or ""]
    except InvalidOperation:
        return None
