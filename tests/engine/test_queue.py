"""The work queue's semantics, against a real redis-server (no worker needed)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import orjson
import pytest
import redis
from django.test import override_settings

from controllers.base import Key
from opsboard.engine.queue import Tick, Why, WorkQueue, backoff, claim, tick
from tests.support.waiting import wait_for

KEY = Key("toy", "ns", "a")


@pytest.fixture
def queue(redis_url: str) -> Iterator[WorkQueue]:
    yield WorkQueue("toy", redis.Redis.from_url(redis_url))


def test_a_key_queued_twice_before_it_runs_is_sent_once(queue: WorkQueue) -> None:
    assert queue.add(KEY, Why("event"))
    assert not queue.add(KEY, Why("event"))
    assert queue.depth() == 1


def test_start_takes_the_queued_reason_and_empties_the_queue(queue: WorkQueue) -> None:
    queue.add(KEY, Why("manual", "by alice"))
    started = queue.start(KEY, "t1", 5, Why("event"))
    assert started is not None and (started.why.trigger, started.why.detail) == (
        "manual",
        "by alice",
    )
    assert queue.depth() == 0


def test_a_key_changed_while_running_is_sent_again_when_done(queue: WorkQueue) -> None:
    queue.add(KEY, Why("event"))
    queue.start(KEY, "t1", 5, Why("event"))
    assert not queue.add(KEY, Why("event")), "no second task while the first runs"
    assert not queue.add(KEY, Why("event"))
    assert queue.done(KEY, "t1")
    assert queue.start(KEY, "t2", 5, Why("event")) is not None
    assert not queue.done(KEY, "t2")


def test_a_second_worker_cannot_start_a_running_key(queue: WorkQueue) -> None:
    queue.start(KEY, "t1", 5, Why("event"))
    assert queue.start(KEY, "t2", 5, Why("event")) is None
    assert queue.done(KEY, "t1"), "the refused start leaves the key queued for after"


def test_only_the_token_holder_releases_the_lock(queue: WorkQueue) -> None:
    queue.start(KEY, "t1", 5, Why("event"))
    queue.done(KEY, "intruder")
    assert queue.start(KEY, "t2", 5, Why("event")) is None


def test_a_dead_workers_key_is_retried_with_backoff_once_its_lock_expires(
    queue: WorkQueue,
) -> None:
    queue.start(KEY, "t1", 0.05, Why("event"))
    queue.add(KEY, Why("event"))  # a change queued behind the run that will die
    assert queue.orphans() == []
    time.sleep(0.1)
    assert queue.orphans() == [KEY]
    assert queue.orphans() == []
    time.sleep(0.05)
    [(key, why)] = queue.due()
    assert key == KEY and (why.trigger, why.detail) == ("retry", "worker lost")
    assert queue.failed(KEY) == 2, "the lost run counted as one failure"


def test_renewing_keeps_a_live_workers_lock(queue: WorkQueue) -> None:
    queue.start(KEY, "t1", 0.2, Why("event"))
    for _ in range(4):
        time.sleep(0.1)
        assert queue.renew(KEY, "t1", 0.2)
    assert queue.orphans() == []
    assert not queue.renew(KEY, "other", 0.2)


def test_delayed_keys_become_due_and_the_earliest_time_wins(queue: WorkQueue) -> None:
    queue.add_after(KEY, 60, Why("retry"))
    queue.add_after(KEY, 0.05, Why("requeue"))
    queue.add_after(KEY, 30, Why("retry"))
    assert queue.due() == []
    time.sleep(0.1)
    [(key, why)] = queue.due()
    assert key == KEY and why.trigger == "retry"
    assert queue.due() == []


def test_a_due_key_already_queued_is_not_sent_twice(queue: WorkQueue) -> None:
    queue.add(KEY, Why("event"))
    queue.add_after(KEY, 0, Why("retry"))
    time.sleep(0.01)
    assert queue.due() == []


@override_settings(OPSBOARD_BACKOFF_BASE=0.005, OPSBOARD_BACKOFF_MAX=1000.0)
def test_backoff_doubles_from_5ms_and_caps_at_1000s() -> None:
    assert [backoff(n) for n in (1, 2, 3, 4)] == [0.005, 0.01, 0.02, 0.04]
    assert backoff(30) == 1000.0
    assert backoff(10_000) == 1000.0


@override_settings(
    OPSBOARD_BACKOFF_BASE=0.005, OPSBOARD_BACKOFF_MAX=1000.0, OPSBOARD_BACKOFF_TEMPORARY_MAX=60.0
)
def test_a_temporary_errors_backoff_doubles_alike_and_caps_at_a_minute() -> None:
    """A NodePort another Service holds clears with no event for the CR: a retry 16 minutes
    after the port is freed was the cap of a failing reconcile's."""
    assert [backoff(n, temporary=True) for n in (1, 2, 3, 4)] == [0.005, 0.01, 0.02, 0.04]
    assert backoff(30, temporary=True) == 60.0
    assert backoff(30) == 1000.0


@override_settings(OPSBOARD_BACKOFF_BASE=0.005, OPSBOARD_BACKOFF_MAX=1000.0,
                   OPSBOARD_DENIED_RETRY=30.0, OPSBOARD_DENIED_RETRY_MAX=300.0)  # fmt: skip
def test_a_refused_writes_backoff_starts_at_the_denied_retry_and_caps_at_five_minutes() -> None:
    """A 403 is refused again in 5 ms: only a grant, which nothing announces, changes it.
    The count is the key's, which its children's events raise too: uncapped, a grant made
    after a few of them waited for the resync."""
    assert [backoff(n, denied=True) for n in (1, 2, 3, 4)] == [30.0, 60.0, 120.0, 240.0]
    assert backoff(10, denied=True) == 300.0
    assert backoff(30) == 1000.0


def test_failures_count_up_and_a_successful_end_resets_them(queue: WorkQueue) -> None:
    assert [queue.failed(KEY) for _ in range(3)] == [1, 2, 3]
    queue.start(KEY, "t", 5, Why("event"))
    assert queue.done(KEY, "t") is False
    assert queue.failed(KEY) == 4, "a run that did not succeed forgets nothing"
    queue.start(KEY, "t", 5, Why("event"))
    queue.done(KEY, "t", succeeded=True)
    assert queue.failed(KEY) == 1


def test_a_successful_end_can_requeue_the_key_after_a_delay(queue: WorkQueue) -> None:
    queue.start(KEY, "t", 5, Why("event"))
    queue.done(KEY, "t", succeeded=True, after=(0.05, Why("requeue", "after 0.05s")))
    assert queue.due() == [], "not yet"
    [(key, why)] = wait_for(queue.due, timeout=5, what="the requeued key due")
    assert (key, why.trigger) == (KEY, "requeue")


def test_a_queued_key_whose_task_was_lost_is_found_stale(queue: WorkQueue) -> None:
    queue.add(KEY, Why("event", at=time.time() - 120))
    running = Key("toy", "ns", "running")
    queue.add(running, Why("event", at=time.time() - 120))
    queue.start(running, "t", 5, Why("event"))
    queue.add(running, Why("event", at=time.time() - 120))  # queued behind its own run
    assert [key for key, _ in queue.stale(60)] == [KEY]
    assert queue.stale(60) == [], "refreshed: not sent again at once"


def test_one_tick_finds_the_due_the_orphaned_and_the_stale_keys_of_every_queue(
    redis_url: str,
) -> None:
    client = redis.Redis.from_url(redis_url)
    toy, other = WorkQueue("toy", client), WorkQueue("other", client)
    due, dead, lost = (
        Key("toy", "ns", "due"),
        Key("other", "ns", "dead"),
        Key("other", "ns", "lost"),
    )
    toy.add_after(due, 0, Why("requeue", at=time.time() - 120))  # its reason is old: not stale
    other.start(dead, "t", 0.05, Why("event"))
    other.add(lost, Why("event", at=time.time() - 120))
    time.sleep(0.1)

    first = tick([toy, other], stale_after=60)
    assert [key for key, _ in first[0].due] == [due]
    assert (first[0].orphans, first[0].stale) == ([], [])
    assert first[1].orphans == [dead]
    assert [key for key, _ in first[1].stale] == [lost]
    assert toy.next_due_ms is None

    second = tick([toy, other], stale_after=60)
    assert [t.stale for t in second] == [[], []], "one sweep per hold"
    assert tick([toy]) == [Tick([], [], [])], "nothing more is due"
    # The retry's backoff is 5 ms: the second tick may have found it due already.
    retried = second[1].due or wait_for(
        lambda: tick([other])[0].due, timeout=5, what="the dead key's retry"
    )
    assert [(key, why.detail) for key, why in retried] == [(dead, "worker lost")]


def test_running_keys_are_listed_until_done_or_found_dead(queue: WorkQueue) -> None:
    other = Key(KEY.controller, KEY.namespace, "other")
    assert queue.running_seconds() == []
    queue.start(KEY, "t1", 5, Why("event"))
    queue.start(other, "t2", 0.05, Why("event"))
    assert len(queue.running_seconds()) == 2
    assert all(seconds >= 0 for seconds in queue.running_seconds())
    queue.done(KEY, "t1")
    time.sleep(0.1)
    assert len(queue.running_seconds()) == 1  # the dead worker's key, until it is found
    assert queue.orphans() == [other]
    assert queue.running_seconds() == []


def test_a_manual_request_relabels_a_key_already_queued(queue: WorkQueue) -> None:
    assert queue.add(KEY, Why("event", "MODIFIED", at=1000.0))
    assert not queue.add(KEY, Why("resync"))  # the first reason stays
    assert not queue.add(KEY, Why("manual", "by otto"), relabel=True)
    started = queue.start(KEY, "t1", 5, Why("retry"))
    assert started is not None
    assert started.why == Why("manual", "by otto", 1000.0)  # queued since the event


def test_a_manual_request_for_a_running_key_labels_the_run_after_it(queue: WorkQueue) -> None:
    queue.start(KEY, "t1", 5, Why("event"))
    assert not queue.add(KEY, Why("manual", "by otto"), relabel=True)
    assert queue.done(KEY, "t1")
    started = queue.start(KEY, "t2", 5, Why("event", "changed while reconciling"))
    assert started is not None and (started.why.trigger, started.why.detail) == (
        "manual",
        "by otto",
    )


def test_start_takes_the_runs_triggers_and_backoff_step_with_the_lock(queue: WorkQueue) -> None:
    queue.add(KEY, Why("event", "ADDED Toy ns/a"))
    queue.add(KEY, Why("event", "MODIFIED ConfigMap ns/a"))
    queue.failed(KEY)
    started = queue.start(KEY, "t1", 5, Why("event"))
    assert started is not None
    details = [orjson.loads(raw)["d"] for raw in started.triggers]
    assert details == ["ADDED Toy ns/a", "MODIFIED ConfigMap ns/a"]
    assert (started.trigger_count, started.failures) == (2, 1)
    queue.done(KEY, "t1")
    again = queue.start(KEY, "t2", 5, Why("resync"))
    assert again is not None and (again.triggers, again.trigger_count) == ([], 0)


def _state(queue: WorkQueue, key: Key) -> dict[str, object]:
    """What a start leaves in Redis about `key` (the lock's token aside)."""
    client = queue.client
    return {
        "locked": bool(client.exists(queue.lock_name(key))),
        "processing": client.zscore(queue.processing, str(key)) is not None,
        "running": client.hexists(queue.running, str(key)),
        "queued": client.hexists(queue.queued, str(key)),
        "triggers": client.exists(queue.triggers(key), queue.trigger_count(key)),
    }


def test_a_claim_pops_a_key_and_starts_it_as_start_does(queue: WorkQueue) -> None:
    """The consumer's one round trip (queue.claim) leaves what a pop and `start` leave,
    built from the key's own names: here the two are run side by side."""
    ready, mine = "opsboard:ready:test-claim", "opsboard:ready:test-claim:claimed:1"
    other = Key("toy", "ns", "b")
    for key in (KEY, other):
        queue.add(key, Why("manual", f"by {key.name}"))
    queue.client.lpush(ready, str(KEY))

    claimed = claim(queue.client, ready, mine, "event", ttl=5, timeout=1)
    started = queue.start(other, "t-other", 5, Why("event"))

    assert claimed is not None and claimed.key == KEY and claimed.started is not None
    assert started is not None
    assert (claimed.started.why.detail, started.why.detail) == ("by a", "by b")
    assert claimed.started.trigger_count == started.trigger_count == 1
    assert (
        _state(queue, KEY)
        == _state(queue, other)
        == {
            "locked": True,
            "processing": True,
            "running": True,
            "queued": False,
            "triggers": 0,
        }
    )
    assert queue.client.get(queue.lock_name(KEY)) == claimed.token.encode()
    assert not queue.client.exists(mine)
    assert queue.done(KEY, claimed.token, succeeded=True) is False  # its lock, released


def test_a_claim_of_a_running_key_leaves_it_queued_for_after(queue: WorkQueue) -> None:
    """Queued with the time it was popped, not the time the claim began to wait: the
    queue's wait is told from it (workqueue_queue_duration_seconds)."""
    ready, mine = "opsboard:ready:test-claim", "opsboard:ready:test-claim:claimed:2"
    queue.start(KEY, "t1", 5, Why("event"))
    pushed: list[float] = []

    def push_later() -> None:
        time.sleep(0.5)
        pushed.append(time.time())
        queue.client.lpush(ready, str(KEY))

    pusher = threading.Thread(target=push_later)
    pusher.start()
    claimed = claim(queue.client, ready, mine, "event", ttl=5, timeout=3)
    pusher.join()
    assert claimed is not None and claimed.started is None
    why = Why.load(queue.client.hget(queue.queued, str(KEY)))
    assert why.trigger == "event" and why.at >= pushed[0] - 0.05
    assert queue.done(KEY, "t1"), "the running worker sends it again"


def test_a_claim_with_no_key_waits_and_a_lost_script_is_loaded_again(queue: WorkQueue) -> None:
    ready, mine = "opsboard:ready:test-claim", "opsboard:ready:test-claim:claimed:3"
    assert claim(queue.client, ready, mine, "event", ttl=5, timeout=1) is None
    queue.client.script_flush()  # as a restarted Redis: the BLMOVE runs, the script does not
    queue.client.lpush(ready, str(KEY))
    claimed = claim(queue.client, ready, mine, "event", ttl=5, timeout=1)
    assert claimed is not None and claimed.started is not None
    assert not queue.client.exists(mine)
