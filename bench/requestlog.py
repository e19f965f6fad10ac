"""What kubesim's request log says: requests split from leader election, writes, calls."""

from __future__ import annotations

from collections import Counter
from typing import Any

from bench.kube import WRITE_VERBS


def split_leases(
    records: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Leader election renews a Lease every few seconds whatever the fleet does: it is
    counted on its own, not charged to the reconciles that happen to overlap it."""
    others: list[dict[str, Any]] = []
    leases: list[dict[str, Any]] = []
    for record in records:
        (leases if str(record.get("resource", "")).startswith("leases") else others).append(record)
    return others, leases


def writes_of(records: list[dict[str, Any]]) -> int:
    return sum(1 for r in records if r.get("verb") in WRITE_VERBS)


def calls_of(records: list[dict[str, Any]]) -> dict[str, int]:
    """What the requests were: "patch deployments", "create events", "update leases"..."""
    return dict(
        Counter(
            f"{r.get('verb')} {r.get('resource')}"
            + (f"/{r['subresource']}" if r.get("subresource") else "")
            for r in records
        ).most_common()
    )
