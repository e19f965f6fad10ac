"""Kubernetes resource quantities ("1Gi", "500m", "1e3") as exact numbers."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1)}
_DECIMAL |= {"k": Decimal(10**3), "M": Decimal(10**6), "G": Decimal(10**9)}
_DECIMAL |= {"T": Decimal(10**12), "P": Decimal(10**15), "E": Decimal(10**18)}


def parse_quantity(value: str | int | float) -> Decimal:
    """Raises ValueError on anything that is not a quantity."""
    text = str(value).strip()
    for suffix, factor in _BINARY.items():
        if text.endswith(suffix):
            return _number(text[: -len(suffix)]) * factor
    if text and text[-1] in _DECIMAL and not text[-1].isdigit():
        return _number(text[:-1]) * _DECIMAL[text[-1]]
    return _number(text)


def _number(text: str) -> Decimal:
    try:
        return Decimal(text)
    except InvalidOperation:
        raise ValueError(f"quantities must match the regular expression: {text!r}") from None
