"""`manage.py runwatcher`: the watcher, active only while it holds the leader Lease."""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
import time
import uuid
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from controllers.base import PermanentError
from opsboard.engine.echoes import echoes_of
from opsboard.engine.enqueue import reconcile_enqueue, reconcile_enqueue_many, send_queued_before
from opsboard.engine.generic import generic_kinds
from opsboard.engine.heartbeat import Heartbeat
from opsboard.engine.kubeclient import api_kube
from opsboard.engine.leader import LeaseElector
from opsboard.engine.registered import controllers
from opsboard.engine.runner import resync_all
from opsboard.engine.watcher import Watcher
from opsboard.heap import freeze_startup_objects
from opsboard.signal_actions import on_signals

log = logging.getLogger("opsboard.watcher")
LEASE_NAME = "opsboard-watcher"
WRITER_STOP_SECONDS = 10.0  # a stop waits this long for the mirror writer's last batch


class Command(BaseCommand):
    help = "Watch the registered kinds, keep the mirror and queue reconciles (one leader)."

    def handle(self, *args: Any, **options: Any) -> None:
        identity = f"{socket.gethostname()}_{os.getpid()}_{uuid.uuid4().hex[:6]}"
        stop = threading.Event()
        on_signals((signal.SIGTERM, signal.SIGINT), stop.set)
        elector = LeaseElector(
            api_kube(),
            namespace=settings.OPSBOARD_LEASE_NAMESPACE,
            name=LEASE_NAME,
            identity=identity,
            lease_duration=settings.OPSBOARD_LEASE_DURATION,
        )
        heartbeat = Heartbeat(identity, timezone.now())
        retry = settings.OPSBOARD_LEASE_RETRY_PERIOD
        log.info("Watcher %s started; waiting for the lease", identity)
        while not stop.is_set() and not _leads(elector):
            heartbeat.beat(leader=False, lease_error=elector.last_error)
            stop.wait(retry)
        if stop.is_set():
            heartbeat.remove()
            return
        log.info("Watcher %s leads", identity)
        heartbeat.beat(leader=True, claim=True)
        self._resend_unsent()
        kube = api_kube()
        watcher = Watcher(
            kube=kube,
            controllers=list(controllers().values()),
            enqueue=reconcile_enqueue,
            enqueue_many=reconcile_enqueue_many,
            echoes=echoes_of,
            namespaces=settings.WATCH_NAMESPACES,
            mirror_only=generic_kinds(kube),
            resync=resync_all,
        )
        freeze_startup_objects()  # before the first list: the mirror's objects come and go
        writer = threading.Thread(target=watcher.run, name="mirror writer", daemon=True)
        writer.start()
        renewed = time.monotonic()
        while not stop.wait(retry):
            try:
                leads = _leads(elector)
            except CommandError:  # the grant on the Lease was taken away while leading
                watcher.deposed.set()
                watcher.stop.set()
                heartbeat.remove()
                raise
            if leads:
                renewed = time.monotonic()
                heartbeat.beat(leader=True)
            elif time.monotonic() - renewed > settings.OPSBOARD_LEASE_RENEW_DEADLINE:
                why = f" ({elector.last_error})" if elector.last_error else ""
                log.error("Watcher %s lost the lease%s: exiting", identity, why)
                watcher.deposed.set()
                watcher.stop.set()
                heartbeat.beat(leader=False, lease_error=elector.last_error)
                sys.exit(1)  # as controller-runtime does; the supervisor starts a candidate
            if not writer.is_alive():
                log.error("The mirror writer died: exiting")
                elector.release()
                sys.exit(1)
        watcher.stop.set()
        # Its last batch and resume points written before a successor may start.
        writer.join(timeout=WRITER_STOP_SECONDS)
        released = elector.release()
        heartbeat.remove()
        left = "released the lease" if released else "left the lease to expire"
        log.info("Watcher %s stopped and %s", identity, left)

    @staticmethod
    def _resend_unsent() -> None:
        """A predecessor killed between a key's dedup step and its Celery task left the key
        marked queued with no task, and every later change of it deduplicated against that
        mark: send those now rather than after the stale sweep (OPSBOARD_QUEUE_STALE_SECONDS).
        A key that did have a task waiting runs once more, a no-op."""
        try:
            sent = send_queued_before(list(controllers()), time.time())
        except Exception:  # Redis down: the stale sweep sends them once it is back
            log.warning("Could not re-send the keys queued before this watcher led", exc_info=True)
        else:
            if sent:
                log.info("Re-sent %d keys queued before this watcher led", sent)


def _leads(elector: LeaseElector) -> bool:
    """One attempt at the Lease. No grant on it (a 403: OPSBOARD_LEASE_NAMESPACE names a
    namespace where this identity may not use leases) ends the command in one line."""
    try:
        return elector.try_acquire_or_renew()
    except PermanentError as exc:
        verb = _VERBS.get(str(exc).split(" ", 1)[0], "get, create and update")
        raise CommandError(
            f"The watcher may not {verb} the Lease {elector.namespace}/{elector.name} "
            f"({exc}). Set OPSBOARD_LEASE_NAMESPACE to the namespace where its identity may "
            "get, create and update leases.coordination.k8s.io (k8s/rbac grants them in "
            "opsboard's own namespace)."
        ) from None


_VERBS = {"GET": "get", "POST": "create", "PUT": "update"}  # the Lease's requests: their verbs
