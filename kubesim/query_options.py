"""Single-valued query options read as apimachinery's parameter codec reads them: the first of
repeated values (url.Values.Get), integers with strconv.ParseInt and its errors, booleans
false only when "0" or "false" in any case."""

from __future__ import annotations

import re

from kubesim import errors

_INT64 = re.compile(r"[+-]?[0-9]+")
_INT64_MAX = 2**63 - 1


def first_values(query: dict[str, list[str]]) -> dict[str, str]:
    """Each option's first value."""
    return {name: values[0] for name, values in query.items()}


def int_option(query: dict[str, str], name: str) -> int | None:
    """An integer option, None when absent; present but not an int64 is the server's 400."""
    value = query.get(name)
    if value is None:
        return None
    if not _INT64.fullmatch(value):
        raise errors.bad_request(f'strconv.ParseInt: parsing "{value}": invalid syntax')
    number = int(value)
    if not -_INT64_MAX - 1 <= number <= _INT64_MAX:
        raise errors.bad_request(f'strconv.ParseInt: parsing "{value}": value out of range')
    return number


def bool_option(query: dict[str, str], name: str) -> bool:
    """A boolean option: absent is false, and so are "0" and "false" (any case); the rest,
    the empty value too, is true."""
    value = query.get(name)
    return value is not None and value != "0" and value.lower() != "false"


def list_ints(query: dict[str, str]) -> tuple[int | None, int | None]:
    """A list's or watch's timeoutSeconds and limit, decoded in ListOptions' field order (the
    first that does not parse is the error)."""
    return int_option(query, "timeoutSeconds"), int_option(query, "limit")
