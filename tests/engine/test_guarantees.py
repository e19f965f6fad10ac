"""The engine's guarantees (issue 5), with real Celery workers, redis-server and kubesim."""

from __future__ import annotations

import itertools
import re
import signal
import socket
import time
from collections.abc import Callable
from typing import Any

import pytest
import redis

from controllers.base import EVENT, Key
from controllers.kube import ApiKube
from opsboard.celery import app
from opsboard.embedded.redis import EmbeddedRedis
from opsboard.engine.enqueue import reconcile_enqueue
from opsboard.engine.models import ReconcileRun
from opsboard.engine.queue import Why, queue_for
from opsboard.mirror.models import KubeObject, WatcherHeartbeat
from opsboard.mirror.selectors import object_events
from opsboard.mirror.writer import kind_watch_resume_point, mirror_apply
from tests.engine.toy import CONFIGMAP, TOY, child_size, toy
from tests.fixtures.celery import EngineProcesses
from tests.support.waiting import consistently, settled, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def runs(namespace: str, name: str = "") -> list[ReconcileRun]:
    found = ReconcileRun.objects.filter(namespace=namespace).order_by("started_at")
    return list(found.filter(name=name) if name else found)


def reconciles(namespace: str, name: str) -> int:
    return sum(1 + r.folded_count for r in runs(namespace, name))


def mirrored(namespace: str, kind: str, name: str) -> bool:
    return KubeObject.objects.filter(namespace=namespace, kind=kind, name=name).exists()


def errors(namespace: str, name: str, *, containing: str = "") -> list[ReconcileRun]:
    """The runs of `name` that failed and were retried, whose error holds `containing`."""
    return [r for r in runs(namespace, name) if r.outcome == "error" and containing in r.error]


def quiet(engine: EngineProcesses, namespace: str, name: str, *, settle: float = 0.5) -> int:
    """Waits until `name` has no new runs for `settle` seconds; returns how many it had."""
    return settled(lambda: reconciles(namespace, name), for_s=settle, what=f"{name}'s runs")


@pytest.fixture
def toys(engine: EngineProcesses, toy_crd: None) -> EngineProcesses:
    engine.controllers = "tests.engine.toy"
    return engine


def test_a_burst_of_100_events_for_one_key_leads_to_at_most_2_reconciles(
    toys: EngineProcesses, api: ApiKube, namespace: str
) -> None:
    toys.start_worker(concurrency=2)
    toys.start_watcher()
    api.create(TOY, toy("a", namespace, sleep=1.0, touch=True))
    wait_for(lambda: runs(namespace, "a"), what="the first reconcile")
    before = quiet(toys, namespace, "a")
    key = Key("toy", namespace, "a")
    for _ in range(100):
        reconcile_enqueue(key=key, trigger="event", detail="burst")
    wait_for(lambda: reconciles(namespace, "a") > before, what="a reconcile for the burst")
    # Two reconcile lengths: any third run would have started by then.
    consistently(
        lambda: reconciles(namespace, "a") - before <= 2, for_s=2.5, what="at most 2 reconciles"
    )
    assert 1 <= quiet(toys, namespace, "a") - before <= 2


def test_four_workers_hammering_ten_keys_never_overlap_on_one_key(
    toys: EngineProcesses, api: ApiKube, namespace: str
) -> None:
    workers = [toys.start_worker(concurrency=1, wait=False) for _ in range(4)]
    for worker in workers:
        toys.wait_worker_ready(worker)
    toys.start_watcher()
    names = [f"k{i}" for i in range(10)]
    for name in names:
        api.create(TOY, toy(name, namespace, sleep=0.03, touch=True))
    for _ in range(15):
        for name in names:
            reconcile_enqueue(key=Key("toy", namespace, name), trigger="manual")
        time.sleep(0.02)
    for name in names:
        quiet(toys, namespace, name)
    total = 0
    for name in names:
        done = runs(namespace, name)
        total += len(done)
        for earlier, later in itertools.pairwise(done):
            assert earlier.finished_at <= later.started_at, (name, earlier.worker, later.worker)
    assert total > 2 * len(names)
    assert len({r.worker for r in runs(namespace)}) > 1


def test_a_failing_key_backs_off_exponentially_and_success_resets_it(
    toys: EngineProcesses, api: ApiKube, namespace: str
) -> None:
    toys.extra_env["OPSBOARD_BACKOFF_BASE"] = "0.05"
    toys.start_worker()
    toys.start_watcher()
    api.create(TOY, toy("a", namespace, fail="temporary"))
    wait_for(lambda: len(errors(namespace, "a")) >= 5, what="five failed runs")
    delays = [r.requeue_after for r in errors(namespace, "a")[:5]]
    assert delays == [0.05, 0.1, 0.2, 0.4, 0.8]
    assert [r.trigger for r in errors(namespace, "a")[1:5]] == ["retry"] * 4

    api.patch(TOY, namespace, "a", {"spec": {"fail": None}})
    wait_for(lambda: _first(runs(namespace, "a"), "success"), what="a success")
    # The success creates the ConfigMap, whose event brings one more run; with the status
    # write not yet mirrored that run may meet a conflict, retried after the backoff's
    # first step. The backoff restarts from the last success, once the key is quiet.
    quiet(toys, namespace, "a", settle=1.0)
    success = runs(namespace, "a")[-1]
    assert success.outcome == "success", [(r.outcome, r.error) for r in runs(namespace, "a")]
    api.patch(TOY, namespace, "a", {"spec": {"fail": "temporary", "size": 2}})
    # The first failure after the success, not the last run: its retry comes 0.05 s later.
    failure = wait_for(
        lambda: _first(runs(namespace, "a"), "error", after=success), what="a new failure"
    )
    assert failure.requeue_after == 0.05


def test_a_conflict_is_retried_with_backoff_and_posts_no_warning(
    toys: EngineProcesses, api: ApiKube, namespace: str
) -> None:
    toys.extra_env["OPSBOARD_BACKOFF_BASE"] = "0.05"
    toys.start_worker()
    toys.start_watcher()
    api.create(TOY, toy("a", namespace))
    wait_for(lambda: api.get(CONFIGMAP, namespace, "a"), what="the ConfigMap")
    api.patch(TOY, namespace, "a", {"spec": {"conflict": True}})
    conflicts = lambda: errors(namespace, "a", containing=" 409 ")  # noqa: E731
    wait_for(lambda: len(conflicts()) >= 4, what="four conflicts")
    assert [r.requeue_after for r in conflicts()[:4]] == [0.05, 0.1, 0.2, 0.4]
    uid = api.get(TOY, namespace, "a")["metadata"]["uid"]
    posted = [e for e in api.list(EVENT, namespace)[0] if e["involvedObject"]["uid"] == uid]
    assert any(e["type"] == "Normal" for e in posted), posted  # the create's Event was posted
    assert [e["reason"] for e in posted if e["type"] == "Warning"] == []


def _first(done: list[ReconcileRun], outcome: str, *, after: ReconcileRun | None = None) -> Any:
    """The first run with `outcome`, of those started after `after`'s start."""
    since = after.started_at if after else None
    return next(
        (r for r in done if r.outcome == outcome and (since is None or r.started_at > since)),
        None,
    )


def test_a_permanent_error_is_not_retried(
    toys: EngineProcesses, api: ApiKube, namespace: str
) -> None:
    toys.extra_env["OPSBOARD_BACKOFF_BASE"] = "0.01"
    toys.start_worker()
    toys.start_watcher()
    api.create(TOY, toy("a", namespace, fail="permanent"))
    wait_for(lambda: runs(namespace, "a"), what="the run")
    consistently(lambda: reconciles(namespace, "a") == 1, for_s=1.0, what="no retry")
    [run] = runs(namespace, "a")
    assert run.outcome == "permanent" and "spec.fail" in run.error
    # Posted as a Warning Event on the CR, which the mirror keeps for the UI.
    [event] = wait_for(lambda: object_events(uid=run.uid), what="the Event in the mirror")
    assert (event.body["type"], event.body["reason"]) == ("Warning", "ReconcileFailed")


def test_a_worker_killed_mid_reconcile_is_recovered(
    toys: EngineProcesses, api: ApiKube, namespace: str, redis_url: str
) -> None:
    first = toys.start_worker()
    toys.start_watcher()
    api.create(TOY, toy("a", namespace, sleep=1.5))
    lock = f"opsboard:toy:lock:toy/{namespace}/a"
    client = redis.Redis.from_url(redis_url)
    wait_for(lambda: client.exists(lock), what="the reconcile to start")
    toys.kill(first, signal.SIGKILL)
    assert runs(namespace, "a") == [], "killed before it could record anything"
    toys.start_worker()
    [run] = wait_for(lambda: runs(namespace, "a"), timeout=30, what="the recovered reconcile")
    assert run.outcome == "success" and run.actions == ["Created ConfigMap a"]
    assert api.get(CONFIGMAP, namespace, "a") is not None


@pytest.mark.kubesim_only
def test_a_restarted_watcher_answered_410_misses_nothing_and_repeats_nothing(
    toys: EngineProcesses, api: ApiKube, namespace: str, kubesim_server: Any
) -> None:
    toys.start_worker(concurrency=2)
    watcher = toys.start_watcher()
    names = [f"t{i}" for i in range(6)]
    for name in names:
        api.create(TOY, toy(name, namespace, size=1))
    # Each ConfigMap's ADDED event handled (mirrored; the echo of a run's own create, it
    # queues nothing) before the kill: one the watcher had not handled yet is news to its
    # successor.
    for name in names:
        wait_for(lambda n=name: mirrored(namespace, "ConfigMap", n), what=f"{name}'s ConfigMap")
    # And each Toy's status write handled, its resume point saved: a change the watcher
    # mirrored but was killed before saving past is replayed as news, by design (it cannot
    # tell whether it queued it), and would give t5 a run the test does not expect.
    for name in names:
        wait_for(
            lambda n=name: (api.get(TOY, namespace, n).get("status") or {}).get("size") == 1,
            what=f"{name}'s status",
        )
    latest = max(int(api.get(TOY, namespace, n)["metadata"]["resourceVersion"]) for n in names)
    wait_for(
        lambda: int(kind_watch_resume_point(kind=TOY) or 0) >= latest,
        what="the watcher's resume point past the Toys' status writes",
    )
    api.patch(TOY, namespace, "t0", {"spec": {"size": 2}})  # a stream of changes...
    toys.kill(watcher, signal.SIGKILL)  # ...interrupted
    settled_runs = {name: quiet(toys, namespace, name) for name in names}
    api.patch(TOY, namespace, "t1", {"spec": {"size": 3}})
    api.patch(TOY, namespace, "t2", {"spec": {"size": 4}})
    api.delete(TOY, namespace, "t3")
    kubesim_server.expire_next_watch(resource="toys.test.opsboard.dev")
    toys.start_watcher()
    api.patch(TOY, namespace, "t4", {"spec": {"size": 5}})
    for name, size in (("t0", "2"), ("t1", "3"), ("t2", "4"), ("t4", "5")):
        wait_for(
            lambda n=name, s=size: api.get(CONFIGMAP, namespace, n)["data"]["size"] == s,
            what=f"{name} to converge",
        )
    wait_for(lambda: not KubeObject.objects.filter(kind="Toy", name="t3").exists())
    consistently(
        lambda: reconciles(namespace, "t5") == settled_runs["t5"], for_s=1.0, what="t5 unchanged"
    )
    # A resume point expired over a restart is the usual start: no line at INFO says so.
    logs = "".join(log.read_text() for log in toys.tmp.glob("*.log"))
    assert "Watch of Toy expired (410 Gone)" not in logs
    for name in ("t1", "t2", "t4"):  # one spec change, one update: no repeats
        updates = [r for r in runs(namespace, name) if r.actions and "Updated" in r.actions[0]]
        assert len(updates) == 1, (
            name,
            [(r.trigger_detail, r.actions) for r in runs(namespace, name)],
        )


def test_a_watcher_stopped_gracefully_saves_how_far_it_got(
    toys: EngineProcesses, api: ApiKube, namespace: str
) -> None:
    """While it runs, the resume point is saved at most every SAVE_EVERY (or when nothing
    comes); a stop must not leave the last changes for its successor to replay as news."""
    # A watcher of chosen namespaces keeps no resume point (see Watcher.run); with no
    # worker started, one of all namespaces reconciles nobody's objects on a shared cluster.
    toys.extra_env.pop("OPSBOARD_WATCH_NAMESPACES", None)
    watcher = toys.start_watcher()
    created = api.create(TOY, toy("a", namespace, size=1))["metadata"]["resourceVersion"]
    wait_for(
        lambda: int(kind_watch_resume_point(kind=TOY) or 0) >= int(created),
        what="the watcher listed every kind and saved its first resume point",
    )
    for size in range(2, 12):  # until a change is mirrored before its resume point is saved
        latest = api.patch(TOY, namespace, "a", {"spec": {"size": size}})["metadata"]
        wait_for(
            lambda rv=latest["resourceVersion"]: KubeObject.objects.filter(
                namespace=namespace, kind="Toy", name="a", resource_version=rv
            ).exists(),
            what=f"size {size} mirrored",
        )
        if int(kind_watch_resume_point(kind=TOY) or 0) < int(latest["resourceVersion"]):
            break
    else:
        pytest.fail("every change's resume point was saved by the time it was mirrored")
    toys.kill(watcher, signal.SIGTERM)
    assert watcher.returncode == 0, toys.logs()
    assert int(kind_watch_resume_point(kind=TOY)) >= int(latest["resourceVersion"])


def _size_1_then_the_watcher_killed(
    toys: EngineProcesses, api: ApiKube, namespace: str
) -> Callable[[], str | None]:
    """Toy `a` converged at size 1, then its watcher SIGKILLed; returns a reader of the
    size its ConfigMap holds."""
    toys.start_worker()
    watcher = toys.start_watcher()
    api.create(TOY, toy("a", namespace, size=1))

    def size() -> str | None:
        return child_size(api, namespace, "a")

    wait_for(lambda: size() == "1", what="size 1")
    toys.kill(watcher, signal.SIGKILL)
    return size


def test_a_change_mirrored_by_a_watcher_killed_before_queueing_it_is_reconciled(
    toys: EngineProcesses, api: ApiKube, namespace: str, kubesim_server: Any
) -> None:
    if kubesim_server.real:
        pytest.skip(
            "on a real cluster the test engine watches its own namespace, and a watcher of "
            "chosen namespaces keeps no resume point to tell what was queued"
        )
    size = _size_1_then_the_watcher_killed(toys, api, namespace)
    changed = api.patch(TOY, namespace, "a", {"spec": {"size": 2}})
    mirror_apply(kind=TOY, events=[("MODIFIED", changed)])  # the dead watcher's last act
    toys.start_watcher()
    wait_for(lambda: size() == "2", what="size 2")


def test_a_key_queued_by_a_watcher_killed_before_pushing_it_is_reconciled(
    toys: EngineProcesses, api: ApiKube, namespace: str
) -> None:
    toys.extra_env["OPSBOARD_QUEUE_STALE_SECONDS"] = "600"  # not the stale sweep's doing
    size = _size_1_then_the_watcher_killed(toys, api, namespace)
    queue, key = queue_for("toy"), Key("toy", namespace, "a")
    wait_for(  # the runs the ConfigMap's event brought are over
        lambda: (
            not queue.client.hexists(queue.queued, str(key))
            and not queue.client.exists(queue.lock_name(key))
        ),
        what="a neither queued nor running",
    )
    changed = api.patch(TOY, namespace, "a", {"spec": {"size": 2}})
    # The dead watcher's last acts: mirrored, marked queued in Redis, never pushed.
    mirror_apply(kind=TOY, events=[("MODIFIED", changed)])
    assert queue.add(key, Why("event", "the lost one"))
    toys.start_watcher()
    wait_for(lambda: size() == "2", timeout=30, what="size 2")


@pytest.mark.kubesim_only
def test_a_watcher_killed_before_every_kind_was_listed_leaves_no_key_behind(
    toys: EngineProcesses, api: ApiKube, namespace: str, kubesim_server: Any
) -> None:
    # Its first lists mirrored the Toy, whose key waited for the ConfigMaps' list; its
    # successor, listing again, finds the mirror already holding the Toy as it is.
    kubesim_server.add_latency(10_000, verb="list", resource="configmaps", count=1)
    api.create(TOY, toy("a", namespace, size=1))
    toys.start_worker()
    watcher = toys.start_watcher()
    wait_for(lambda: mirrored(namespace, "Toy", "a"), what="the Toy mirrored")
    toys.kill(watcher, signal.SIGKILL)
    assert runs(namespace, "a") == [], "its key was held: nothing ran it"
    toys.start_watcher()
    wait_for(lambda: api.get(CONFIGMAP, namespace, "a"), timeout=30, what="the Toy reconciled")


def test_a_standby_watcher_takes_over_when_the_leader_dies(
    toys: EngineProcesses, api: ApiKube, namespace: str
) -> None:
    toys.start_worker()
    first = toys.start_watcher()
    host = socket.gethostname()

    def leader() -> str:
        row = WatcherHeartbeat.objects.filter(is_leader=True).order_by("-heartbeat_at").first()
        return row.identity if row else ""

    wait_for(lambda: leader().startswith(f"{host}_{first.pid}_"), what="the first to lead")
    second = toys.start_watcher()
    wait_for(
        lambda: WatcherHeartbeat.objects.filter(
            identity__startswith=f"{host}_{second.pid}_", is_leader=False
        ).exists(),
        what="the second to stand by",
    )
    assert leader().startswith(f"{host}_{first.pid}_")
    toys.kill(first, signal.SIGKILL)
    lease = float(toys.extra_env["OPSBOARD_LEASE_DURATION"])
    retry = float(toys.extra_env["OPSBOARD_LEASE_RETRY_PERIOD"])
    wait_for(
        lambda: leader().startswith(f"{host}_{second.pid}_"),
        timeout=lease + 3 * retry + 2,  # the lease, observed, then a retry period to take it
        what="the standby to lead",
    )
    api.create(TOY, toy("after", namespace))
    wait_for(lambda: api.get(CONFIGMAP, namespace, "after"), what="the new leader to work")


def test_a_reconcile_past_the_hard_time_limit_ends_its_process_and_frees_its_key(
    toys: EngineProcesses, api: ApiKube, namespace: str
) -> None:
    toys.extra_env.update(OPSBOARD_TASK_SOFT_TIME_LIMIT="2", OPSBOARD_TASK_TIME_LIMIT="4")
    worker = toys.start_worker()
    toys.start_watcher()
    api.create(TOY, toy("hung", namespace, sleep=600))
    ended = wait_for(
        lambda: re.search(
            r"past the hard time limit \(4 s\): ending this process \(pid (\d+)\)", toys.logs()
        ),
        timeout=30,
        what="the hung reconcile's process to end",
    )
    assert f"The reconcile of toy/{namespace}/hung has run for" in toys.logs()  # soft limit
    assert worker.poll() is None, "the worker lives on: its pool starts another process"
    assert runs(namespace, "hung") == [], "ended before it could record anything"
    api.patch(TOY, namespace, "hung", {"spec": {"sleep": 0}})  # its owner mends it
    [run] = wait_for(
        lambda: [r for r in runs(namespace, "hung") if r.outcome == "success"],
        timeout=40,
        what="hung reconciled",
    )
    assert api.get(CONFIGMAP, namespace, "hung") is not None
    assert not run.worker.endswith(f":{ended.group(1)}")  # run by the new pool process


@pytest.mark.parametrize("pool", ["threads", "solo"])
def test_a_worker_on_a_pool_without_processes_reconciles_keys(
    toys: EngineProcesses, api: ApiKube, namespace: str, pool: str
) -> None:
    # Its key consumers run in the worker's own process, as many as its concurrency.
    toys.start_worker(pool=pool, concurrency=2)
    toys.start_watcher()
    for name in ("a", "b", "c"):
        api.create(TOY, toy(name, namespace, size=2))
    for name in ("a", "b", "c"):
        wait_for(lambda n=name: api.get(CONFIGMAP, namespace, n), what=f"{name} reconciled")
    workers = {run.worker for run in runs(namespace)}
    assert len(workers) == 1, workers  # all in the one process


def test_a_worker_that_takes_no_task_while_tasks_wait_exits_to_be_restarted(
    toys: EngineProcesses, api: ApiKube, namespace: str
) -> None:
    # A worker consuming another queue looks, from outside, like one whose Celery consumer
    # stalled after a Redis restart (celery#9054): connected, idle, taking nothing. Keys
    # do not pass through Celery's consumer (opsboard.engine.consumer); the resync does.
    toys.extra_env["OPSBOARD_QUEUE_STALE_SECONDS"] = "2"
    stalled = toys.start_worker(queue="nobody-sends-here")
    toys.start_watcher()
    api.create(TOY, toy("a", namespace, size=3))
    app.send_task("opsboard.engine.tasks.resync")
    wait_for(lambda: stalled.poll() is not None, timeout=30, what="the stalled worker to exit")
    log = toys.logs()
    assert stalled.returncode == 70, log  # EX_SOFTWARE: a supervisor restarts it
    assert "its consumer has stalled" in log
    assert api.get(CONFIGMAP, namespace, "a") is None  # nobody ran it meanwhile
    assert toys.restart_exited_workers() == [70]
    wait_for(
        lambda: child_size(api, namespace, "a") == "3",
        what="the restarted worker to run the key",
    )


def test_everything_converges_after_redis_restarts(
    toys_on_own_redis: tuple[EngineProcesses, EmbeddedRedis], api: ApiKube, namespace: str
) -> None:
    engine, server = toys_on_own_redis
    engine.extra_env["OPSBOARD_RESYNC_SECONDS"] = "2"
    engine.extra_env["OPSBOARD_QUEUE_STALE_SECONDS"] = "3"
    client = redis.Redis.from_url(server.url)

    def converged(name: str, size: str) -> bool:
        engine.restart_exited_workers()  # as make run's supervisor, or the kubelet, would
        return child_size(api, namespace, name) == size

    engine.start_worker(concurrency=2)
    engine.start_watcher()
    engine.start_beat()
    api.create(TOY, toy("a", namespace, size=1))
    wait_for(lambda: api.get(CONFIGMAP, namespace, "a"), what="the ConfigMap")
    # A reconcile still running when Redis goes down cannot release its key's lock.
    api.create(TOY, toy("slow", namespace, size=4, sleep=1.5))
    running = lambda: any(client.hlen(k) for k in client.keys("opsboard:*:running"))  # noqa: E731
    wait_for(running, what="slow to run")
    server.stop()
    api.patch(TOY, namespace, "a", {"spec": {"size": 2}})  # queued nowhere: Redis is down
    api.create(TOY, toy("b", namespace, size=7))
    time.sleep(2.0)  # an outage of some length: the changes above wait in no queue
    server.start()
    for name, size in (("a", "2"), ("b", "7"), ("slow", "4")):
        try:
            wait_for(lambda n=name, s=size: converged(n, s), timeout=40, what=f"{name}")
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{engine.logs()}") from None
