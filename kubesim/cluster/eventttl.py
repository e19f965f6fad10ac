"""Expiry of the Events the simulated components post (kube-apiserver's --event-ttl)."""

from __future__ import annotations

from collections.abc import Hashable

from kubesim.cluster.controller import Controller


class EventExpiry(Controller):
    """One timer item that deletes the Events this cluster posted once their TTL is over."""

    name = "event-ttl"

    def resync(self) -> None:
        self.enqueue("expire")

    def reconcile(self, key: Hashable) -> float | None:
        return self.ctx.events.expire()
