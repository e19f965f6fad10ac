"""'Reconcile now': enqueue the CR's key with the engine and audit who asked."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone
from kombu.exceptions import OperationalError
from redis.exceptions import RedisError

from controllers.base import Key
from opsboard.audit.models import AuditEntry
from opsboard.audit.services import audit_record
from opsboard.dashboard.kinds import KindInfo
from opsboard.engine.enqueue import reconcile_enqueue
from opsboard.mirror.models import KubeObject


def cr_reconcile_now(*, user: User, info: KindInfo, cr: KubeObject) -> AuditEntry:
    key = Key(info.name, cr.namespace, cr.name)
    record: dict[str, Any] = {
        "user": user, "action": AuditEntry.Action.RECONCILE, "info": info,
        "namespace": cr.namespace, "name": cr.name, "uid": cr.uid, "asked_at": timezone.now(),
    }  # fmt: skip
    try:
        queued = reconcile_enqueue(key=key, trigger="manual", detail=f"by {user.get_username()}")
    except (RedisError, OperationalError, OSError) as exc:  # the broker is down: say so
        message = f"Could not queue the reconcile, the queue is unreachable: {exc}"
        return audit_record(**record, result=AuditEntry.Result.FAILED, message=message)
    message = (
        f"Queued {key}"
        if queued
        else f"{key} was already queued — it will run in a moment; the log below shows it"
    )
    # The generation lets the audit link this request to the run that served it.
    return audit_record(
        **record, result=AuditEntry.Result.APPLIED, message=message, generation=cr.generation
    )
