"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does.

A candidate takes the Lease when it is free, or when its holder has not renewed it for
leaseDuration as measured on the candidate's own clock (the time it last saw the record
change, so clocks need not agree). The leader renews every retryPeriod and gives up if it
cannot renew within renewDeadline. Writes carry the resourceVersion they were based on,
so two candidates can never both win. A leader renews the Lease as it last wrote it,
without reading it first (client-go's optimistic fast path since 1.27): one request per
renewal, not two; a conflict sends it the slow way, read then write.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

from controllers.base import Body, Kind, PermanentError, TemporaryError
from controllers.kube import ApiKube, Conflict

log = logging.getLogger(__name__)
LEASE = Kind("coordination.k8s.io", "v1", "Lease", "leases")


def _micro_time() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaseElector:
    def __init__(
        self,
        kube: ApiKube,
        *,
        namespace: str,
        name: str,
        identity: str,
        lease_duration: float = 15.0,
    ) -> None:
        self.kube = kube
        self.namespace, self.name, self.identity = namespace, name, identity
        self.lease_duration = lease_duration
        self._observed: tuple[str, str, str] | None = None  # (holder, renewTime, rv)
        self._observed_at = 0.0
        self._held: Body | None = None  # the Lease as our last successful write left it
        # Why the last attempt could neither take nor renew the Lease (the API server
        # unreachable or failing); "" after a success, or when another candidate holds it.
        self.last_error = ""

    def _observe(self, lease: Body) -> str:
        spec = lease.get("spec") or {}
        record = (
            spec.get("holderIdentity") or "",
            spec.get("renewTime") or "",
            lease["metadata"].get("resourceVersion", ""),
        )
        if record != self._observed:
            self._observed, self._observed_at = record, time.monotonic()
        return record[0]

    def try_acquire_or_renew(self) -> bool:
        """One attempt; True when this candidate holds the Lease afterwards. A 403 (no
        grant on the Lease) raises PermanentError: retrying cannot help."""
        self.last_error = ""
        if self._held is not None:
            try:
                self._write(self._held)
                return True
            except (Conflict, TemporaryError):
                self._held = None  # changed under us, or the server failed: look first
        try:
            lease = self.kube.get(LEASE, self.namespace, self.name)
            if lease is None:
                self._held = self._observed_lease(self.kube.create(LEASE, self._lease({}, 0)))
                return True
            holder = self._observe(lease)
            expired = time.monotonic() - self._observed_at > self.lease_duration
            if holder and holder != self.identity and not expired:
                return False
            self._write(lease)
            return True
        except Conflict:
            return False  # another candidate wrote first: it leads
        except TemporaryError as exc:
            self.last_error = str(exc)
            return False

    def _write(self, lease: Body) -> None:
        """Writes `lease` (as read, or as we last wrote it) held by us, renewed now."""
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        transitions = int(spec.get("leaseTransitions") or 0) + (holder != self.identity)
        body = self._lease(lease, transitions)
        if holder == self.identity:
            body["spec"]["acquireTime"] = spec.get("acquireTime") or body["spec"]["acquireTime"]
        self._held = self._observed_lease(self.kube.replace(LEASE, body))

    def _observed_lease(self, lease: Body) -> Body:
        self._observe(lease)
        return lease

    def release(self) -> bool:
        """Hands the Lease over at once (client-go's ReleaseOnCancel) if we hold it; False
        when that failed and a standby must wait leaseDuration to take it."""
        self._held = None
        try:
            lease = self.kube.get(LEASE, self.namespace, self.name)
            if lease and (lease.get("spec") or {}).get("holderIdentity") == self.identity:
                body = self._lease(lease, int(lease["spec"].get("leaseTransitions") or 0))
                body["spec"].update({"holderIdentity": "", "leaseDurationSeconds": 1})
                self.kube.replace(LEASE, body)
            return True
        except (Conflict, TemporaryError, PermanentError) as exc:  # a 403: the grant is gone
            log.warning("Could not release the Lease %s/%s: %s", self.namespace, self.name, exc)
            return False

    def _lease(self, current: Body, transitions: int) -> Body:
        now = _micro_time()
        metadata = {"name": self.name, "namespace": self.namespace}
        if current:
            metadata["resourceVersion"] = current["metadata"]["resourceVersion"]
        return {
            "apiVersion": LEASE.api_version,
            "kind": LEASE.kind,
            "metadata": metadata,
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": max(1, round(self.lease_duration)),
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": transitions,
            },
        }
