"""Expiry of the Events the simulated components post (kube-apiserver's --event-ttl)."""

from __future__ import annotations

from kubesim.cluster.controller import Controller


class EventExpiry(Controller[str]):
    """One timer item that deletes the Events this cluster posted once their TTL is over."""

    name = "event-ttl"

    def resync(self) -> None:
        self.enqueue("expire")

    def reconcile(self, key: str) -> float | None:
        return self.ctx.events.expire()
