"""Percentiles and summaries of latency samples."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(samples: Sequence[float], p: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), p in [0, 100]."""
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    rank = (len(ordered) - 1) * p / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summary_ms(samples_s: Sequence[float]) -> dict[str, float | int]:
    """p50/p95/p99/max in milliseconds of samples taken in seconds."""
    if not samples_s:
        return {"n": 0}
    ms = [s * 1000 for s in samples_s]
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 2),
        "p95_ms": round(percentile(ms, 95), 2),
        "p99_ms": round(percentile(ms, 99), 2),
        "max_ms": round(max(ms), 2),
    }
