"""Kubernetes resource quantities ("1Gi", "500m", "1e3") as exact numbers."""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Decimal, InvalidOperation

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


_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T"}
_DECIMAL_SUFFIXES |= {15: "P", 18: "E"}
_EXPONENT = re.compile(r"\d[eE][-+]?\d+$")


def canonical_quantity(value: str | int | float) -> str:
    """A quantity as Go's Quantity.String() prints it: "0.5" is "500m", "1024Mi" is "1Gi",
    in the suffix family it was written in, rounded up to a nano. Raises ValueError."""
    text = str(value).strip()
    number = parse_quantity(text)
    nanos = int((abs(number) * 10**9).to_integral_value(rounding=ROUND_CEILING))
    sign = "-" if number < 0 and nanos else ""
    binary = text.endswith(tuple(_BINARY_SUFFIXES[1:]))
    if binary and nanos >= 1024 * 10**9 and nanos % 10**9 == 0:
        amount, power = nanos // 10**9, 0
        while amount % 1024 == 0 and power < len(_BINARY_SUFFIXES) - 1:
            amount, power = amount // 1024, power + 1
        return f"{sign}{amount}{_BINARY_SUFFIXES[power]}"
    if not nanos:
        return "0"
    amount, exponent = nanos, -9
    while amount % 1000 == 0 and exponent < 18:
        amount, exponent = amount // 1000, exponent + 3
    if _EXPONENT.search(text):
        return f"{sign}{amount}" + (f"e{exponent}" if exponent else "")
    return f"{sign}{amount}{_DECIMAL_SUFFIXES[exponent]}"
