"""Lease leader election against kubesim: one holder, takeover after expiry, release."""

from __future__ import annotations

from controllers.kube import ApiKube
from opsboard.engine.leader import LEASE, LeaseElector
from tests.support.waiting import consistently, wait_for


def elector(api: ApiKube, namespace: str, identity: str, duration: float = 1.0) -> LeaseElector:
    return LeaseElector(
        api, namespace=namespace, name="watcher", identity=identity, lease_duration=duration
    )


def holder(api: ApiKube, namespace: str) -> str:
    return api.get(LEASE, namespace, "watcher")["spec"]["holderIdentity"]


def test_only_one_candidate_holds_the_lease(api: ApiKube, namespace: str) -> None:
    a, b = elector(api, namespace, "a"), elector(api, namespace, "b")
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    assert a.try_acquire_or_renew(), "the holder renews"
    assert not b.try_acquire_or_renew()
    assert holder(api, namespace) == "a"


def test_a_standby_takes_over_once_the_holder_stops_renewing(api: ApiKube, namespace: str) -> None:
    a, b = elector(api, namespace, "a"), elector(api, namespace, "b")
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()  # b starts observing the record now
    wait_for(b.try_acquire_or_renew, timeout=10, what="b to take the expired lease")
    assert holder(api, namespace) == "b"
    assert api.get(LEASE, namespace, "watcher")["spec"]["leaseTransitions"] == 1
    assert not a.try_acquire_or_renew(), "the old holder sees b's renewals"


def test_a_renewing_holder_is_never_taken_over(api: ApiKube, namespace: str) -> None:
    a, b = elector(api, namespace, "a"), elector(api, namespace, "b")
    consistently(
        lambda: a.try_acquire_or_renew() and not b.try_acquire_or_renew(),
        for_s=1.8,  # the lease lasts 1 s
        interval=0.3,
        what="a holding the lease",
    )


def test_a_released_lease_is_taken_at_once(api: ApiKube, namespace: str) -> None:
    a, b = elector(api, namespace, "a", duration=30), elector(api, namespace, "b", duration=30)
    assert a.try_acquire_or_renew()
    a.release()
    assert b.try_acquire_or_renew()
    assert holder(api, namespace) == "b"
