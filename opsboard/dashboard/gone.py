"""A CR that a page shows, deleted since the page was opened: how the page finds out (the
mirror no longer holds it), what it says (when, if the run log knows) and how an action
on it is refused: audited as rejected, nothing sent to the cluster."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import User

from opsboard.audit.models import AuditEntry
from opsboard.audit.services import audit_record
from opsboard.dashboard.kinds import KindInfo
from opsboard.engine.mapping import change_detail
from opsboard.engine.models import ReconcileRun
from opsboard.mirror import selectors as mirror
from opsboard.mirror.models import KubeObject
from opsboard.mirror.writer import DELETED


@dataclass(frozen=True)
class Gone:
    info: KindInfo
    namespace: str
    name: str
    uid: str  # of the object the page showed; "" if the request did not say
    deleted_seen_at: datetime | None  # when its controller ran for the deletion, if known
    replaced: bool  # another object of that name exists now (deleted and created again)

    @property
    def title(self) -> str:
        return f"{self.info.kind.kind} {self.namespace}/{self.name}"

    @property
    def shown_by_a_page(self) -> bool:
        """Whether a page that showed the object asked (not someone opening its URL)."""
        return bool(self.uid)

    @property
    def refusal(self) -> str:
        return deleted_refusal(self.info, self.namespace, self.name)


def deleted_refusal(info: KindInfo, namespace: str, name: str) -> str:
    """What an action on a CR deleted since its page was opened answers."""
    return (
        f"{info.kind.kind} {namespace}/{name} no longer exists: it was deleted since you "
        "opened this page; nothing was changed."
    )


def cr_or_gone(*, info: KindInfo, namespace: str, name: str, uid: str = "") -> KubeObject | Gone:
    """The mirrored CR, or Gone when the mirror no longer holds it. `uid`: the object the
    page showed; another of the same name (deleted and created again) is not that one."""
    cr = mirror.cr_get(kind=info.kind, namespace=namespace, name=name)
    if cr is not None and (not uid or cr.uid == uid):
        return cr
    return Gone(
        info=info, namespace=namespace, name=name, uid=uid,
        deleted_seen_at=_deletion_run_at(info, namespace, name), replaced=cr is not None,
    )  # fmt: skip


def _deletion_run_at(info: KindInfo, namespace: str, name: str) -> datetime | None:
    """When the run that the CR's deletion queued started (the watcher names the event that
    queued a run in its trigger_detail): the nearest the mirror, which drops the object,
    comes to a time of deletion."""
    detail = change_detail(DELETED, info.kind.kind, namespace, name)
    runs = ReconcileRun.objects.filter(
        controller=info.name, namespace=namespace, name=name, trigger_detail=detail
    )
    return runs.order_by("-started_at").values_list("started_at", flat=True).first()


def cr_gone_refuse(*, user: User, gone: Gone, action: str) -> AuditEntry:
    """Audits an action asked on a deleted CR as rejected, as the API's refusals are."""
    return audit_record(
        user=user, action=action, info=gone.info, namespace=gone.namespace, name=gone.name,
        uid=gone.uid, result=AuditEntry.Result.REJECTED, message=gone.refusal,
    )  # fmt: skip
