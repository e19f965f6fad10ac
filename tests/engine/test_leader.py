"""Lease leader election against kubesim: one holder, takeover after expiry, release."""

from __future__ import annotations

from typing import Any

import pytest

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


@pytest.mark.kubesim_only  # the request log
def test_the_holder_renews_with_one_write_and_no_read(
    api: ApiKube, namespace: str, kubesim_server: Any
) -> None:
    a = elector(api, namespace, "a", duration=30)
    assert a.try_acquire_or_renew()
    kubesim_server.clear_request_log()
    for _ in range(3):
        assert a.try_acquire_or_renew()
    leases = [r.verb for r in kubesim_server.request_log(resource="leases")]
    assert leases == ["update"] * 3


def test_a_holder_whose_lease_was_written_by_another_reads_it_again(
    api: ApiKube, namespace: str
) -> None:
    a = elector(api, namespace, "a", duration=30)
    assert a.try_acquire_or_renew()
    lease = api.get(LEASE, namespace, "watcher")
    lease["spec"]["holderIdentity"] = "b"  # b's write, which a's next renewal conflicts with
    api.replace(LEASE, lease)
    assert not a.try_acquire_or_renew(), "b holds a lease a sees renewed just now"
    assert holder(api, namespace) == "b"
