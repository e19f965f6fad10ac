"""Counts told in words for people: "1 pod", "3 pods" (pure)."""

from __future__ import annotations


def plural(n: int, singular: str, many: str | None = None) -> str:
    """`singular` for one, else `many` (default: singular + "s"); for a verb too:
    `plural(n, "waits", "wait")`."""
    return singular if n == 1 else (many or f"{singular}s")


def count(n: int, singular: str, many: str | None = None) -> str:
    """ "1 pod", "0 pods", "3 pods"."""
    return f"{n} {plural(n, singular, many)}"
