"""What the operator under measurement asked of the API server in a window: kubesim's
request log, or on a real server the server's own count of the operator's requests
(bench.flowschemas). Leader election and watches are apart."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bench import flowschemas
from bench.kube import WRITE_VERBS

if TYPE_CHECKING:
    from bench.stack import Stack


# Why a real server's count is missing (RequestMeter.stop() -> None), for the notes.
NOT_COUNTED = (
    "not counted, the server does not sort them by FlowSchema (no API Priority and "
    "Fairness, or turned off)"
)


@dataclass(frozen=True)
class Asked:
    requests: int  # Leases and watches aside
    writes: int  # Events included
    event_writes: int
    leases: int  # leader election: renewed every few seconds whatever the fleet does
    # What they were: "patch deployments", "create events"... in kubesim's log; on a real
    # server, the kinds its count tells apart ("other writes", "reads"...).
    calls: dict[str, int]


class RequestMeter:
    """`start()`, the work, `stop()` -> what the stack's operator asked in between; None on
    a real server that does not count it (no API Priority and Fairness)."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self._before: Counter[str] = Counter()

    def start(self) -> RequestMeter:
        if self.stack.external is None:
            self.stack.api.clear_request_log()
        elif self.stack.requests_counted:
            self._before = self._counts()
        return self

    def stop(self) -> Asked | None:
        if self.stack.external is None:
            return from_log(self.stack.api.request_log())
        if not self.stack.requests_counted:
            return None
        return from_counts(self._counts() - self._before)

    def _counts(self) -> Counter[str]:
        return flowschemas.counts(self.stack.api.metrics(), self.stack.namespace)


def from_log(records: list[dict[str, Any]]) -> Asked:
    """kubesim's request log (watches and the bench's own requests already left out)."""
    leases: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    for record in records:
        (leases if str(record.get("resource", "")).startswith("leases") else others).append(record)
    events = [r for r in others if str(r.get("resource", "")).startswith("events")]
    return Asked(
        requests=len(others),
        writes=_writes(others),
        event_writes=_writes(events),
        leases=len(leases),
        calls=dict(
            Counter(
                f"{r.get('verb')} {r.get('resource')}"
                + (f"/{r['subresource']}" if r.get("subresource") else "")
                for r in others
            ).most_common()
        ),
    )


def from_counts(counted: Counter[str]) -> Asked:
    """A real server's count of the operator's requests by kind (flowschemas.KINDS)."""
    writes = counted["event writes"] + counted["other writes"]
    return Asked(
        requests=writes + counted["reads"],
        writes=writes,
        event_writes=counted["event writes"],
        leases=counted["leases"],
        calls={kind: n for kind, n in counted.most_common() if kind not in ("watches", "leases")},
    )


def _writes(records: list[dict[str, Any]]) -> int:
    return sum(1 for r in records if r.get("verb") in WRITE_VERBS)
