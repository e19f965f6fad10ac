"""HTTP-level fault injection and the request log.

Faults match requests by verb and resource (None matches any) and are drawn from a seeded
random generator, so a test that sets a seed sees the same sequence of failures every run.
"""

from __future__ import annotations

import collections
import operator
import random
import threading
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from kubesim import errors
from kubesim.errors import ApiError

ERROR_CODES = (403, 409, 422, 429, 500, 503)


def _names(target: str, resource: str) -> bool:
    """`target` names `resource` ("deployments.apps"): the same, or without its group."""
    return target in (resource, resource.partition(".")[0])


@dataclass
class Fault:
    id: int
    type: str  # "latency" | "error" | "expire-watch"
    verb: str | None = None
    resource: str | None = None
    namespace: str | None = None
    latency_ms: float = 0.0
    jitter_ms: float = 0.0
    code: int = 500
    retry_after: int = 1
    probability: float = 1.0
    count: int | None = None  # how many more requests it applies to; None means no limit
    message: str | None = None
    hits: int = 0

    def matches(self, verb: str, resource: str, namespace: str | None) -> bool:
        return (
            (self.verb is None or self.verb == verb)
            and (self.resource is None or _names(self.resource, resource))
            and (self.namespace is None or self.namespace == namespace)
        )

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class RequestRecord:
    time: float
    method: str
    path: str
    verb: str
    resource: str
    subresource: str
    namespace: str
    name: str
    status: int
    duration_ms: float
    user_agent: str
    fault: int | None = field(default=None)
    field_manager: str = ""  # the write's fieldManager, as managedFields would name it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _error(fault: Fault, resource: str, name: str) -> ApiError:
    if fault.code == 429:
        return errors.too_many_requests(fault.retry_after)
    if fault.code == 409:
        return errors.conflict(resource or "objects", name or "", fault.message or errors.STALE)
    if fault.code == 503:
        return errors.unavailable(
            fault.message or "the server is currently unable to handle the request"
        )
    if fault.code == 500:
        return errors.internal(fault.message or "injected fault")
    if fault.code == 422:  # a refusal the API server's state decides, e.g. a port taken
        return ApiError(422, "Invalid", fault.message or "injected fault")
    if fault.code == 403:  # an admission webhook's or policy's denial, which kubesim has not
        return ApiError(403, "Forbidden", fault.message or "injected fault")
    return ApiError(fault.code, "InternalError", fault.message or "injected fault")


class Faults:
    """The faults in force, and the generation counter that closes open watch streams."""

    def __init__(self, seed: int | None = None) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []
        self._next_id = 1
        self._random = random.Random(seed)
        self.watch_generation = 0  # open watches started in an older generation end
        self._closed_resources: dict[int, str | None] = {}

    def seed(self, seed: int) -> None:
        with self._lock:
            self._random = random.Random(seed)

    def _add(self, fault: Fault) -> Fault:
        with self._lock:
            fault.id = self._next_id
            self._next_id += 1
            self._faults.append(fault)
            return fault

    def add_latency(
        self,
        ms: float,
        *,
        jitter_ms: float = 0.0,
        verb: str | None = None,
        resource: str | None = None,
        namespace: str | None = None,
        count: int | None = None,
    ) -> Fault:
        return self._add(
            Fault(
                0,
                "latency",
                verb,
                resource,
                namespace,
                latency_ms=ms,
                jitter_ms=jitter_ms,
                count=count,
            )
        )

    def add_error(
        self,
        code: int,
        *,
        verb: str | None = None,
        resource: str | None = None,
        namespace: str | None = None,
        probability: float = 1.0,
        count: int | None = None,
        retry_after: int = 1,
        message: str | None = None,
    ) -> Fault:
        if code not in ERROR_CODES:
            raise ValueError(f"code must be one of {ERROR_CODES}")
        return self._add(
            Fault(
                0,
                "error",
                verb,
                resource,
                namespace,
                code=code,
                probability=probability,
                count=count,
                retry_after=retry_after,
                message=message,
            )
        )

    def expire_next_watch(self, *, resource: str | None = None, count: int = 1) -> Fault:
        """Answer the next `count` watch resumes (a watch from a resourceVersion) with 410."""
        return self._add(Fault(0, "expire-watch", "watch", resource, count=count))

    def close_watches(self, resource: str | None = None) -> None:
        """End the watch streams open now (all, or those of one resource)."""
        with self._lock:
            self.watch_generation += 1
            self._closed_resources[self.watch_generation] = resource

    def watch_closed(self, started_generation: int, resource: str) -> bool:
        if started_generation >= self.watch_generation:
            return False
        with self._lock:
            for gen in range(started_generation + 1, self.watch_generation + 1):
                target = self._closed_resources.get(gen)
                if target is None or _names(target, resource):
                    return True
        return False

    def remove(self, fault_id: int) -> bool:
        with self._lock:
            before = len(self._faults)
            self._faults = [f for f in self._faults if f.id != fault_id]
            return len(self._faults) != before

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def list(self) -> list[dict[str, Any]]:
        with self._lock:
            return [f.to_dict() for f in self._faults]

    def _consume(self, fault: Fault) -> None:
        fault.hits += 1
        if fault.count is not None:
            fault.count -= 1
            if fault.count <= 0:
                self._faults.remove(fault)

    def before(
        self, verb: str, resource: str, namespace: str | None, name: str
    ) -> tuple[float, ApiError | None, int | None]:
        """The delay (seconds) and the error, if any, to inflict on this request."""
        if not self._faults:
            return 0.0, None, None
        delay, error, fault_id = 0.0, None, None
        with self._lock:
            for fault in list(self._faults):
                if fault.type == "expire-watch" or not fault.matches(verb, resource, namespace):
                    continue
                if fault.type == "latency":
                    jitter = self._random.uniform(-fault.jitter_ms, fault.jitter_ms)
                    delay += max(fault.latency_ms + jitter, 0.0) / 1000
                    self._consume(fault)
                elif (
                    fault.type == "error"
                    and error is None
                    and (fault.probability >= 1.0 or self._random.random() < fault.probability)
                ):
                    error = _error(fault, resource, name)
                    fault_id = fault.id
                    self._consume(fault)
        return delay, error, fault_id

    def take_expired_watch(self, resource: str, namespace: str | None) -> bool:
        with self._lock:
            for fault in self._faults:
                if fault.type == "expire-watch" and fault.matches("watch", resource, namespace):
                    self._consume(fault)
                    return True
        return False


_FIELDS = [f.name for f in fields(RequestRecord)]
_row = operator.attrgetter(*_FIELDS)  # a record's tuple
_TIME, _VERB, _RESOURCE = _FIELDS.index("time"), _FIELDS.index("verb"), _FIELDS.index("resource")


class RequestLog:
    """The last `limit` requests. Kept as plain tuples of their fields, which the cyclic
    collector stops tracking: a long-running kubesim's 100,000 records were as many
    objects for each full collection to walk, every request waiting meanwhile."""

    def __init__(self, limit: int = 100_000) -> None:
        self._records: collections.deque[tuple[Any, ...]] = collections.deque(maxlen=limit)
        self._lock = threading.Lock()

    def add(self, record: RequestRecord) -> None:
        row = _row(record)
        with self._lock:
            self._records.append(row)

    def records(
        self, *, verb: str | None = None, resource: str | None = None, since: float | None = None
    ) -> list[RequestRecord]:
        with self._lock:
            rows = list(self._records)
        # Filtered as tuples: a long-running kubesim holds 100,000 of them.
        return [
            RequestRecord(*row)
            for row in rows
            if (verb is None or row[_VERB] == verb)
            and (
                resource is None
                or _names(resource, row[_RESOURCE])
                or _names(row[_RESOURCE], resource)  # either may carry the group
            )
            and (since is None or row[_TIME] >= since)
        ]

    def clear(self) -> None:
        with self._lock:
            self._records.clear()
