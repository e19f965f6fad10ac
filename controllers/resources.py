"""A container's compute resources, set on the CR ("spec.resources") and laid on its pods (pure).

The CR's field is a container's own `resources` block, narrowed to cpu and memory: what a
person needs to stop an out-of-memory kill or to fit a namespace's quota. Quantities are
written to the child as the API server prints them ("0.5" is "500m", "1024Mi" is "1Gi"),
so a child that took them compares equal and costs no write on the next run.
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Decimal, InvalidOperation

from controllers.base import Body
from controllers.fields import deep_get

RESOURCE_NAMES = ("cpu", "memory")
PARTS = ("requests", "limits")

_BINARY = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_SUFFIX_OF = {exponent: suffix for suffix, exponent in _DECIMAL.items()}
# The CRD's pattern: Kubernetes' quantity without a sign (a negative request means nothing).
QUANTITY_RE = re.compile(
    r"^(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?P<suffix>[KMGTPE]i|[numkMGTPE]|[eE][-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))?$"
)


def parse_quantity(value: str | int) -> Decimal:
    """The quantity in its base unit (cores, bytes). Raises ValueError."""
    text = str(value)
    match = QUANTITY_RE.match(text)
    if match is None:
        raise ValueError(f"{value!r} is not a quantity")
    number, suffix = Decimal(match["number"]), match["suffix"] or ""
    if suffix in _BINARY:
        return number * Decimal(1024 ** _BINARY.index(suffix))
    if suffix in _DECIMAL:
        return number.scaleb(_DECIMAL[suffix])
    try:
        return number.scaleb(int(Decimal(suffix[1:])))
    except (InvalidOperation, ValueError):
        raise ValueError(f"{value!r} is not a quantity") from None


def canonical_quantity(value: str | int) -> str:
    """A quantity as Go's Quantity.String() prints it, in the suffix family it was written in
    (binary, decimal or exponent), rounded up to a nano. Raises ValueError."""
    text = str(value)
    nanos = int((parse_quantity(text) * 10**9).to_integral_value(rounding=ROUND_CEILING))
    if not nanos:
        return "0"
    if text.endswith(_BINARY[1:]) and nanos >= 1024 * 10**9 and nanos % 10**9 == 0:
        amount, power = nanos // 10**9, 0
        while amount % 1024 == 0 and power < len(_BINARY) - 1:
            amount, power = amount // 1024, power + 1
        return f"{amount}{_BINARY[power]}"
    amount, exponent = nanos, -9
    while amount % 1000 == 0 and exponent < 18:
        amount, exponent = amount // 1000, exponent + 3
    if re.search(r"[0-9.][eE][-+]?[0-9.]+$", text):
        return f"{amount}" + (f"e{exponent}" if exponent else "")
    return f"{amount}{_SUFFIX_OF[exponent]}"


def container_resources(cr: Body, path: str) -> Body:
    """The container's `resources` from the CR's field at `path`, quantities canonical;
    {} when the CR sets none (and, with `exact_resources`, none left on the child)."""
    wanted: Body = {}
    for part in PARTS:
        given = _part(cr, path, part)
        amounts = {
            name: canonical_quantity(given[name]) for name in RESOURCE_NAMES if name in given
        }
        if amounts:
            wanted[part] = amounts
    return wanted


def resources_problem(cr: Body, path: str) -> str | None:
    """What the API server would refuse in the child, said of the CR's field: a quantity it
    cannot read, or a request above its limit."""
    for part in PARTS:
        given = deep_get(cr, f"{path}.{part}") or {}
        if not isinstance(given, dict):
            return f"{path}.{part}: Invalid value: {given!r}: must be a map of cpu and memory"
        for name in RESOURCE_NAMES:
            if name in given and not _is_quantity(given[name]):
                return (
                    f"{path}.{part}.{name}: Invalid value: {given[name]!r}: must be a quantity "
                    "such as 250m, 0.5, 64Mi or 1Gi"
                )
    requests, limits = _part(cr, path, "requests"), _part(cr, path, "limits")
    for name in RESOURCE_NAMES:
        if name in requests and name in limits and _above(requests[name], limits[name]):
            return (
                f"{path}.requests.{name}: Invalid value: {str(requests[name])!r}: must be "
                f"less than or equal to {name} limit of {limits[name]}"
            )
    return None


def _part(cr: Body, path: str, part: str) -> Body:
    """The CR's requests or limits; {} for anything but a map (`resources_problem` says so:
    a CRD without validation lets anything through)."""
    given = deep_get(cr, f"{path}.{part}")
    return given if isinstance(given, dict) else {}


def _above(request: str | int, limit: str | int) -> bool:
    return parse_quantity(request) > parse_quantity(limit)


def _is_quantity(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, str | int):
        return False
    try:
        parse_quantity(value)
    except ValueError:
        return False
    return True


def exact_resources(containers: str = "spec.template.spec.containers") -> frozenset[str]:
    """The `exact` paths (see `owned_diff`) that make a container's resources the CR's alone:
    a limit removed from the CR is removed from the pods too."""
    at = f"{containers}[].resources"
    return frozenset({at, *(f"{at}.{part}" for part in PARTS)})
