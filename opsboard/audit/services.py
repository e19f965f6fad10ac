"""Writing audit entries, and linking each patch to the reconcile run that first saw it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import OuterRef, Subquery

from opsboard.audit.models import AuditEntry
from opsboard.engine.models import ReconcileRun

if TYPE_CHECKING:
    from opsboard.dashboard.kinds import KindInfo


def audit_record(
    *,
    user: AbstractBaseUser,
    action: str,
    info: KindInfo,
    namespace: str,
    name: str,
    result: str,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    message: str = "",
    uid: str = "",
    generation: int | None = None,
) -> AuditEntry:
    return AuditEntry.objects.create(
        user=user,
        username=user.get_username(),
        action=action,
        controller=info.name,
        kind=info.kind.kind,
        namespace=namespace,
        name=name,
        uid=uid,
        before=before or {},
        after=after or {},
        result=result,
        message=message,
        generation=generation,
    )


def audit_link_observers() -> int:
    """Fill `observed_by` for applied patches whose generation a reconcile has now seen:
    the earliest run of that object at or past the generation. Returns the rows linked."""
    first_run = ReconcileRun.objects.filter(
        uid=OuterRef("uid"), generation__gte=OuterRef("generation"), started_at__gte=OuterRef("at")
    ).order_by("started_at")
    pending = AuditEntry.objects.filter(
        observed_by__isnull=True, generation__isnull=False, result=AuditEntry.Result.APPLIED
    ).exclude(uid="")
    return pending.filter(
        id__in=pending.annotate(run=Subquery(first_run.values("id")[:1]))
        .filter(run__isnull=False)
        .values("id")
    ).update(observed_by=Subquery(first_run.values("id")[:1]))
