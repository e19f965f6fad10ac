"""The work queue's semantics, kept in Redis (client-go's workqueue, shared by processes).

Per controller, Redis holds:
- `queued` (hash key → why): keys waiting to run. A key queued twice before it runs is
  run once (HSETNX); a key queued while it runs stays here and is sent again when the
  running worker finishes (the "dirty" case), so one change is never lost.
- `lock:<key>` (string token, PX): the one worker reconciling the key. Its expiry is short
  and renewed while the reconcile runs, so a worker that died frees the key within
  OPSBOARD_LOCK_TTL; the token makes release a compare-and-delete.
- `processing` (zset key → lock deadline): lets any worker find keys whose worker died.
- `running` (hash key → start time, unix ms): when each running reconcile started, for
  workqueue_unfinished_work_seconds and workqueue_longest_running_processor_seconds.
- `delayed` (zset key → due time) and `delayed-why`: retries with backoff and
  requeue-after; the earlier due time wins.
- `fails` (hash key → consecutive failures) for per-key exponential backoff.
- `permanent` (hash key → resourceVersion): a user-fixable error, not retried by resync
  until the object changes.
- `status-written:<key>` (string resourceVersion, PX): the version of the key's CR its last
  run's own status write made, for a minute, so the next run (in any process) knows
  whether the mirror has caught up with it (opsboard.engine.own_status).
- `queued:triggers:<key>` (list of whys) and `queued:triggers-count:<key>`: every reason the
  key was queued for since its last run, recorded by the same script that queues it (one
  round trip per batch, not two) and taken by the run that serves them
  (opsboard.engine.timeline).

- `opsboard:ready:<celery queue>` (list of keys): keys to run now, popped by the pool
  processes of the workers consuming that queue (opsboard.engine.consumer), each through
  `…:claimed:<id>`, its consumer's own list, where the claim script takes it (`claim`).

Everything that would make a key run returns the keys to send, and the caller pushes them
onto the ready list (opsboard.engine.enqueue), with one exception: queueing a key can push
it itself, so that a change costs the watcher one round trip, not two.
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from dataclasses import dataclass
from functools import cache
from typing import Any

import orjson
import redis
from django.conf import settings

from controllers.base import Key
from opsboard.celery import app
from opsboard.engine.pinned_redis import PinnedRedis

# Every reason is appended to the key's triggers (KEYS[3], the newest ARGV[4] kept; count
# in KEYS[4]), queued or deduplicated. With ARGV[3] == '1' (a person asked), an already
# queued key takes the new reason, so the run that serves the request is recorded as
# theirs; it keeps its queued time. A key newly queued and not running returns 1: it is
# to be sent, and with ARGV[6] == '1' it is pushed onto the ready list here (KEYS[5]).
_ENQUEUE = """
redis.call('RPUSH', KEYS[3], ARGV[2])
redis.call('LTRIM', KEYS[3], -tonumber(ARGV[4]), -1)
redis.call('EXPIRE', KEYS[3], ARGV[5])
redis.call('INCR', KEYS[4])
redis.call('EXPIRE', KEYS[4], ARGV[5])
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  if ARGV[3] == '1' then
    local why = cjson.decode(ARGV[2])
    why['at'] = cjson.decode(old)['at']
    redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(why))
  end
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if ARGV[6] == '1' then redis.call('LPUSH', KEYS[5], ARGV[1]) end
return 1
"""
# A key's start, as a function of its key, its Redis names (`k`) and the run's lock: false
# (None) when another worker holds the key, else {the queued reason or `fallback`, the triggers
# merged into this run (they are its own now), how many were recorded in all, the key's
# consecutive failures, the version of its last run's status write}.
_START_FUNCTION = """
local function start(key, k, token, ttl, now, fallback)
  if redis.call('EXISTS', k.lock) == 1 then
    redis.call('HSETNX', k.queued, key, fallback)
    return false
  end
  redis.call('SET', k.lock, token, 'PX', ttl)
  redis.call('ZADD', k.processing, now + tonumber(ttl), key)
  redis.call('HSET', k.running, key, now)
  local why = redis.call('HGET', k.queued, key)
  redis.call('HDEL', k.queued, key)
  local triggers = redis.call('LRANGE', k.triggers, 0, -1)
  local count = redis.call('GET', k.count)
  redis.call('DEL', k.triggers, k.count)
  local failures = redis.call('HGET', k.fails, key) or '0'
  return {why or fallback, triggers, count or '0', failures, redis.call('GET', k.written) or ''}
end
"""
_START = (
    _START_FUNCTION
    + """
local k = {queued = KEYS[1], lock = KEYS[2], processing = KEYS[3], running = KEYS[4],
  triggers = KEYS[5], count = KEYS[6], fails = KEYS[7], written = KEYS[8]}
return start(ARGV[1], k, ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5])
"""
)
# A key popped off the consumer's own list (KEYS[1], where a BLMOVE in the same pipeline
# put it) and started: false when the list is empty (the BLMOVE timed out), else {the key,
# what `start` returns}. The key's names are WorkQueue's, built here from its controller
# (the key's first part); the time is the server's, and so is the fallback reason's (with
# the trigger ARGV[3]): the pipeline may have waited long.
_CLAIM = (
    _START_FUNCTION
    + """
local key = redis.call('RPOP', KEYS[1])
if not key then return false end
local p = ARGV[4] .. string.match(key, '^[^/]+')
local k = {queued = p .. ':queued', lock = p .. ':lock:' .. key, processing = p .. ':processing',
  running = p .. ':running', triggers = p .. ':queued:triggers:' .. key,
  count = p .. ':queued:triggers-count:' .. key, fails = p .. ':fails',
  written = p .. ':status-written:' .. key}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fallback = cjson.encode({t = ARGV[3], d = '', at = now / 1000})
return {key, start(key, k, ARGV[1], ARGV[2], now, fallback)}
"""
)
_RENEW = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], tonumber(ARGV[4]) + tonumber(ARGV[2]), ARGV[3])
return 1
"""
# -1: the lock expired under us (someone else may run the key now: leave it to them);
# 1: the key changed while we ran, send it again; 0: done. What a successful run adds
# (its failures forgotten, its requeue-after) and the version its status write made ride
# along, so a run ends in one round trip.
_DONE = """
if ARGV[6] ~= '' then redis.call('SET', KEYS[10], ARGV[6], 'PX', ARGV[7]) end
if ARGV[3] == '1' then
  redis.call('HDEL', KEYS[5], ARGV[2])
  redis.call('HDEL', KEYS[6], ARGV[2])
end
if ARGV[4] ~= '' then
  redis.call('ZADD', KEYS[7], 'LT', ARGV[4], ARGV[2])
  redis.call('HSET', KEYS[8], ARGV[2], ARGV[5])
  redis.call('LPUSH', KEYS[9], 1)
  redis.call('LTRIM', KEYS[9], 0, 15)
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('HDEL', KEYS[4], ARGV[2])
return redis.call('HEXISTS', KEYS[3], ARGV[2])
"""
# Keys whose worker died: the lock expired but `processing` still lists them. They are
# retried with backoff, like a failure: a reconcile that kills its worker every time
# (hard time limit, out of memory) must not loop at full speed.
_RECOVER_FN = """
local function recover(processing, queued, running, now, lock_prefix)
  local out = {}
  for _, key in ipairs(redis.call('ZRANGEBYSCORE', processing, '-inf', now, 'LIMIT', 0, 100)) do
    if redis.call('EXISTS', lock_prefix .. key) == 0 then
      redis.call('ZREM', processing, key)
      redis.call('HDEL', running, key)
      redis.call('HDEL', queued, key)  -- a change queued behind the dead run: the retry has it
      table.insert(out, key)
    end
  end
  return out
end
"""
# Delayed keys whose time has come, moved into `queued`: {key, why, key, why, ..., the
# earliest due time still delayed or '-1'}. A key already queued or running is not sent.
_PUMP_FN = """
local function pump(delayed, delayed_why, queued, now, lock_prefix, retry_why)
  local out = {}
  for _, key in ipairs(redis.call('ZRANGEBYSCORE', delayed, '-inf', now, 'LIMIT', 0, 500)) do
    redis.call('ZREM', delayed, key)
    local why = redis.call('HGET', delayed_why, key) or retry_why
    redis.call('HDEL', delayed_why, key)
    if redis.call('HSETNX', queued, key, why) == 1 and redis.call('EXISTS', lock_prefix .. key) == 0 then
      table.insert(out, key)
      table.insert(out, why)
    end
  end
  local next_due = redis.call('ZRANGE', delayed, 0, 0, 'WITHSCORES')
  table.insert(out, next_due[2] or '-1')
  return out
end
"""
_RECOVER = _RECOVER_FN + "return recover(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2])"
# A worker's pump, once a second, for every controller in one round trip (it was three
# per controller, most of an idle worker's CPU). Queue i (from 0) has six keys from
# KEYS[6i + 1] and its lock prefix in ARGV[4 + i]; its reply is {the orphans recovered,
# 1 if this worker won the stale sweep, the pump's reply}. ARGV[3] == '' skips the
# orphans and the sweep, else it is the sweep's hold in ms.
_TICK = (
    _RECOVER_FN
    + _PUMP_FN
    + """
local out = {}
for i = 0, #KEYS / 6 - 1 do
  local k, lock_prefix = 6 * i, ARGV[4 + i]
  local orphans, swept = {}, 0
  if ARGV[3] ~= '' then
    orphans = recover(KEYS[k + 4], KEYS[k + 3], KEYS[k + 5], ARGV[1], lock_prefix)
    if redis.call('SET', KEYS[k + 6], 1, 'NX', 'PX', ARGV[3]) then swept = 1 end
  end
  table.insert(out, {orphans, swept, pump(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], ARGV[1], lock_prefix, ARGV[2])})
end
return out
"""
)
# Pushed whenever a key is delayed, so that a pump sleeping until the next due time it
# knew of wakes up for an earlier one (BLPOP), instead of polling Redis many times a second.
WAKE_KEY = "opsboard:pump:wake"
TRIGGERS_KEPT = 20  # per key: a flood is summarised by its newest triggers and a count
PREFIX = "opsboard:"  # of every controller's names (WorkQueue, _CLAIM)
TRIGGERS_TTL_SECONDS = 86_400  # a key deleted while queued leaves no list behind for long
STATUS_WRITTEN_TTL_MS = 60_000  # far longer than the watcher holds a change


@dataclass(frozen=True)
class Why:
    """Why a key is queued: the trigger of the run it leads to, and when it was queued."""

    trigger: str  # event, resync, manual, retry, requeue
    detail: str = ""
    at: float = 0.0  # time.time() when queued, for workqueue_queue_duration_seconds

    def dump(self) -> str:
        return orjson.dumps(
            {"t": self.trigger, "d": self.detail, "at": self.at or time.time()}
        ).decode()

    @classmethod
    def load(cls, text: str | bytes) -> Why:
        data = orjson.loads(text)
        return cls(data["t"], data.get("d", ""), float(data.get("at", 0.0)))


@dataclass(frozen=True)
class Started:
    """What a run takes with its key's lock."""

    why: Why  # its trigger: the first reason it was queued
    triggers: list[bytes]  # every trigger recorded for it, oldest first (JSON, see _ENQUEUE)
    trigger_count: int  # how many were recorded in all (the list keeps the last TRIGGERS_KEPT)
    failures: int  # the key's consecutive failures before this run: its backoff step
    status_written: int | None  # the version of the CR its last run's status write made


def _started(result: Any) -> Started | None:
    """What the start function (_START_FUNCTION) returned."""
    if result is None:
        return None
    why, triggers, count, failures, written = result
    return Started(
        Why.load(why),
        list(triggers),
        int(count),
        int(failures),
        int(written) if written.isdigit() else None,
    )


@dataclass(frozen=True)
class Claimed:
    """A key popped off a ready list, with its start (`claim`)."""

    key: Key
    token: str  # its lock's
    ttl: float
    started: Started | None  # None: another worker holds the key (it runs it again after)


_CLAIM_SHA = hashlib.sha1(_CLAIM.encode()).hexdigest()


def claim(
    client: redis.Redis, ready: str, mine: str, trigger: str, *, ttl: float, timeout: int
) -> Claimed | None:
    """Waits up to `timeout` seconds for a key on the ready list and takes its lock, in one
    round trip, not two: a BLMOVE of the key onto `mine` (the caller's own list) and the
    claim script that pops it from there and starts it, pipelined. Redis runs a client's
    commands in order, so the script runs as soon as the BLMOVE returns. None when no key
    came. A Redis that lost its scripts (restarted) refuses the script: then it is loaded
    and run again, and takes the key from `mine`, where it waited. `trigger`: the reason's,
    for a key popped with none queued (as `start`'s fallback)."""
    token = uuid.uuid4().hex
    args: list[str | int] = [token, int(ttl * 1000), trigger, PREFIX]
    pipe = client.pipeline(transaction=False)
    pipe.blmove(ready, mine, timeout, "RIGHT", "LEFT")
    pipe.evalsha(_CLAIM_SHA, 1, mine, *args)
    moved, result = pipe.execute(raise_on_error=False)
    if isinstance(moved, Exception):
        raise moved
    if isinstance(result, redis.exceptions.NoScriptError):
        client.script_load(_CLAIM)
        result = client.evalsha(_CLAIM_SHA, 1, mine, *args)
    elif isinstance(result, Exception):
        raise result
    if result is None:
        return None
    key, started = result
    return Claimed(Key.parse(os.fsdecode(key)), token, ttl, _started(started))


@cache
def ready_list(celery_queue: str = "") -> str:
    """The Redis list of keys to run now, for the workers consuming `celery_queue` (by
    default the queue tasks go to): a worker started on other queues (-Q) takes none."""
    return f"opsboard:ready:{celery_queue or app.conf.task_default_queue}"


@cache
def connection() -> redis.Redis:
    return PinnedRedis.from_url(
        settings.REDIS_URL,
        socket_timeout=5,
        socket_connect_timeout=5,
        health_check_interval=30,
        retry_on_timeout=True,
    )


def _now_ms() -> int:
    return int(time.time() * 1000)


class WorkQueue:
    """The queue of one controller (its keys all start with the controller's name)."""

    def __init__(self, controller: str, client: redis.Redis | None = None) -> None:
        self.client = client or connection()
        self.prefix = prefix = f"{PREFIX}{controller}"
        self.queued = f"{prefix}:queued"
        self.processing = f"{prefix}:processing"
        self.running = f"{prefix}:running"
        self.delayed = f"{prefix}:delayed"
        self.delayed_why = f"{prefix}:delayed-why"
        self.fails = f"{prefix}:fails"
        self.permanent = f"{prefix}:permanent"
        self.lock_prefix = f"{prefix}:lock:"
        self.sweep_lock = f"{self.queued}:sweep"  # held by the worker sweeping stale keys
        self.next_due_ms: float | None = None  # as of the last `due()`
        scripts: dict[str, Any] = {}
        for name, source in (
            ("enqueue", _ENQUEUE),
            ("start", _START),
            ("renew", _RENEW),
            ("done", _DONE),
            ("recover", _RECOVER),
            ("tick", _TICK),
        ):
            scripts[name] = self.client.register_script(source)
        self._scripts = scripts

    def lock_name(self, key: Key | str) -> str:
        """The Redis key of `key`'s lock: it exists while a worker runs `key`."""
        return f"{self.lock_prefix}{key}"

    def triggers(self, key: Key) -> str:
        return f"{self.queued}:triggers:{key}"

    def trigger_count(self, key: Key) -> str:
        return f"{self.queued}:triggers-count:{key}"

    def status_written(self, key: Key) -> str:
        return f"{self.prefix}:status-written:{key}"

    def add(self, key: Key, why: Why, *, relabel: bool = False, send: bool = False) -> bool:
        """Queues the key and records `why` among its triggers; True when it is to run
        now: pushed onto the ready list already with `send`, else the caller's to send.
        With `relabel`, a key already queued (or queued behind its running reconcile)
        takes `why`."""
        return bool(self._enqueue(key, why, relabel=relabel, send=send))

    def add_many(self, items: list[tuple[Key, Why]], *, send: bool = False) -> list[bool]:
        """`add` for many keys in one round trip (the watcher's batches); each result
        says whether that key was to run now."""
        if not items:
            return []
        pipe = self.client.pipeline(transaction=False)
        for key, why in items:
            self._enqueue(key, why, send=send, client=pipe)
        return [bool(result) for result in pipe.execute()]

    def _enqueue(
        self, key: Key, why: Why, *, relabel: bool = False, send: bool = False, client: Any = None
    ) -> Any:
        keys = [self.queued, self.lock_name(key), self.triggers(key), self.trigger_count(key)]
        flags = ["1" if relabel else "0", TRIGGERS_KEPT, TRIGGERS_TTL_SECONDS, int(send)]
        args = [str(key), why.dump(), *flags]
        return self._scripts["enqueue"](keys=[*keys, ready_list()], args=args, client=client)

    def start(self, key: Key, token: str, ttl: float, fallback: Why) -> Started | None:
        """Takes the key's lock, and with it the triggers recorded for the run (see
        opsboard.engine.timeline); None when another worker holds it (it will run us
        after). One round trip: the timeline's own read was a second one per run."""
        result = self._scripts["start"](
            keys=[
                self.queued,
                self.lock_name(key),
                self.processing,
                self.running,
                self.triggers(key),
                self.trigger_count(key),
                self.fails,
                self.status_written(key),
            ],
            args=[str(key), token, int(ttl * 1000), _now_ms(), fallback.dump()],
        )
        return _started(result)

    def renew(self, key: Key, token: str, ttl: float) -> bool:
        return bool(
            self._scripts["renew"](
                keys=[self.lock_name(key), self.processing],
                args=[token, int(ttl * 1000), str(key), _now_ms()],
            )
        )

    def done(
        self,
        key: Key,
        token: str,
        *,
        succeeded: bool = False,
        after: tuple[float, Why] | None = None,
        status_written: str = "",
    ) -> bool:
        """Releases the lock; True when the key was queued meanwhile and must be sent again.
        With `succeeded`, as `succeeded()`; with `after` (delay, why), as `add_after()`;
        `status_written`: the version the run's status write made, told to the next run."""
        due, why = (_now_ms() + int(after[0] * 1000), after[1].dump()) if after else ("", "")
        result = self._scripts["done"](
            keys=[
                *(self.lock_name(key), self.processing, self.queued, self.running),
                *(self.fails, self.permanent, self.delayed, self.delayed_why, WAKE_KEY),
                self.status_written(key),
            ],
            args=[
                *(token, str(key), "1" if succeeded else "0", due, why),
                *(status_written, STATUS_WRITTEN_TTL_MS),
            ],
        )
        return bool(result == 1)

    def add_after(self, key: Key, delay: float, why: Why) -> None:
        """Queues the key once `delay` seconds have passed (the earliest due time wins)."""
        self.add_many_after([(key, delay)], why)

    def add_many_after(self, delays: list[tuple[Key, float]], why: Why) -> None:
        """add_after for many keys in one round trip (the resync)."""
        now, text = _now_ms(), why.dump()
        pipe = self.client.pipeline(transaction=True)
        for key, delay in delays:
            pipe.zadd(self.delayed, {str(key): now + int(delay * 1000)}, lt=True)
            pipe.hset(self.delayed_why, str(key), text)
        pipe.lpush(WAKE_KEY, 1)
        pipe.ltrim(WAKE_KEY, 0, 15)  # one waiting pump is woken per push; a few suffice
        pipe.execute()

    def due(self) -> list[tuple[Key, Why]]:
        """Moves delayed keys whose time has come into the queue; returns those to send.
        Sets `next_due_ms`: when the earliest key still delayed is due (unix ms), or None."""
        return tick([self])[0].due

    def _took_due(self, flat: list[bytes]) -> list[tuple[Key, Why]]:
        next_due = float(flat.pop())
        self.next_due_ms = None if next_due < 0 else next_due
        return [
            (Key.parse(flat[i].decode()), Why.load(flat[i + 1])) for i in range(0, len(flat), 2)
        ]

    def orphans(self) -> list[Key]:
        """Schedules a retry (with backoff) of each key whose worker died mid-reconcile."""
        found = self._scripts["recover"](
            keys=[self.processing, self.queued, self.running], args=[_now_ms(), self.lock_prefix]
        )
        return self._retry_orphans(found)

    def _retry_orphans(self, found: list[bytes]) -> list[Key]:
        keys = [Key.parse(key.decode()) for key in found]
        for key in keys:
            self.add_after(key, backoff(self.failed(key)), Why("retry", "worker lost"))
        return keys

    def stale(self, older_than: float) -> list[tuple[Key, Why]]:
        """Queued keys that nothing will run: queued longer than `older_than` seconds, and
        not running. That happens when Redis restarts and its append-only file brings back
        a queued marker but not its push onto the ready list, or when a pool process died
        between popping a key and taking its lock; without this the key would stay
        deduplicated against a push that never comes. One worker sweeps at a time; a rare
        duplicate send costs one extra reconcile, never a lost one."""
        if not self.client.set(self.sweep_lock, 1, nx=True, px=_sweep_hold_ms(older_than)):
            return []
        return self.queued_before(time.time() - older_than)

    def queued_before(
        self, cutoff: float, *, sent: frozenset[str] = frozenset()
    ) -> list[tuple[Key, Why]]:
        """Keys queued before `cutoff` (unix time) and not running, re-stamped as queued
        now: those to send again when their push may have been lost. A new leading watcher
        sends them all, since its predecessor may have died between a key's dedup step and
        its push; waiting for the stale sweep would hold every later change of the key.
        `sent`: keys being sent anyway, left as they are."""
        found = []
        for field, value in self.client.hscan_iter(self.queued, count=1000):
            why, name = Why.load(value), field.decode()
            if (
                why.at < cutoff
                and name not in sent
                and not self.client.exists(self.lock_name(name))
            ):
                fresh = Why(why.trigger, why.detail, time.time())
                self.client.hset(self.queued, field, fresh.dump())
                found.append((Key.parse(field.decode()), fresh))
        return found

    def failed(self, key: Key) -> int:
        """Counts one more consecutive failure; returns how many there have been."""
        return int(self.client.hincrby(self.fails, str(key), 1))

    def mark_permanent(self, key: Key, resource_version: str) -> None:
        pipe = self.client.pipeline(transaction=False)
        pipe.hdel(self.fails, str(key))
        pipe.hset(self.permanent, str(key), resource_version)
        pipe.execute()

    def permanent_versions(self) -> dict[str, str]:
        found = self.client.hgetall(self.permanent)
        return {os.fsdecode(k): os.fsdecode(v) for k, v in found.items()}

    def depth(self) -> int:
        return int(self.client.hlen(self.queued))

    def running_seconds(self) -> list[float]:
        """How long each reconcile now running has been running, in seconds."""
        now = _now_ms()
        return [max(now - int(at), 0) / 1000 for at in self.client.hvals(self.running)]


@cache
def queue_for(controller: str) -> WorkQueue:
    return WorkQueue(controller)


@dataclass(frozen=True)
class Tick:
    """What one pump tick found in one controller's queue."""

    due: list[tuple[Key, Why]]  # delayed keys whose time came, to send
    orphans: list[Key]  # keys whose worker died, now scheduled for a retry
    stale: list[tuple[Key, Why]]  # keys queued long ago that nothing will run, to send


def tick(queues: list[WorkQueue], *, stale_after: float | None = None) -> list[Tick]:
    """`due()` of every queue, and with `stale_after` (seconds) `orphans()` and
    `stale(stale_after)` too, in one round trip for all of them (the stale sweep itself,
    rare, is one more). Sets each queue's `next_due_ms`."""
    if not queues:
        return []
    keys, prefixes = [], []
    for q in queues:
        keys += [q.delayed, q.delayed_why, q.queued, q.processing, q.running, q.sweep_lock]
        prefixes.append(q.lock_prefix)
    hold = "" if stale_after is None else str(_sweep_hold_ms(stale_after))
    args = [_now_ms(), Why("retry").dump(), hold, *prefixes]
    replies = queues[0]._scripts["tick"](keys=keys, args=args)
    ticks = []
    for q, (orphans, swept, reply) in zip(queues, replies, strict=True):
        due, stale = q._took_due(reply), []
        if swept and stale_after is not None:
            # The keys just moved in keep their reason's old time: not stale, only due.
            sent = frozenset(str(key) for key, _ in due)
            stale = q.queued_before(time.time() - stale_after, sent=sent)
        ticks.append(Tick(due, q._retry_orphans(orphans), stale))
    return ticks


def _sweep_hold_ms(older_than: float) -> int:
    """How long one worker's stale sweep keeps the others from sweeping: half the age."""
    return int(older_than * 500)


def backoff(failures: int, *, temporary: bool = False, denied: bool = False) -> float:
    """Seconds before retry number `failures`: base doubling per failure, capped.

    A failing reconcile (a bug, an error of no known kind) backs off up to
    OPSBOARD_BACKOFF_MAX, as controller-runtime's rate limiter does (1000 s). A
    `temporary` error (a TemporaryError: a conflict, a NodePort taken, a 5xx, the server
    out of reach) clears when something else changes, often nothing that wakes the key:
    its delay stops growing at OPSBOARD_BACKOFF_TEMPORARY_MAX (60 s), so the retry comes
    within a minute of the cause going, not a quarter of an hour. A `denied` write (a 403)
    waits for someone to grant it: retried within milliseconds it would only be refused
    again, so its delay starts at OPSBOARD_DENIED_RETRY (30 s); it stops growing at
    OPSBOARD_DENIED_RETRY_MAX (5 min), so a grant is taken within minutes of being made."""
    base, cap = settings.OPSBOARD_BACKOFF_BASE, settings.OPSBOARD_BACKOFF_MAX
    if denied:
        base, cap = settings.OPSBOARD_DENIED_RETRY, min(cap, settings.OPSBOARD_DENIED_RETRY_MAX)
    if temporary:
        cap = min(cap, settings.OPSBOARD_BACKOFF_TEMPORARY_MAX)
    return float(min(cap, base * 2 ** min(failures - 1, 64)))
