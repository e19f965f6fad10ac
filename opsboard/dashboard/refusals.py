"""opsboard's own refusal of a change to a CR (a POST without the operator role there, as
only a forged request sends) is a security event: audited as rejected, then answered with
the same 403 as `role_required`'s, which says what it needs and who can grant it."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http.response import HttpResponseBase

from opsboard.accounts.permissions import role_check
from opsboard.accounts.roles import Role
from opsboard.audit.models import AuditEntry
from opsboard.audit.services import audit_record
from opsboard.dashboard.http import DashboardRequest
from opsboard.dashboard.kinds import kind_get
from opsboard.mirror.selectors import cr_get

View = Callable[..., HttpResponseBase]


def change_required(action: str) -> Callable[[View], View]:
    """`role_required(Role.OPERATOR)` for a view of one CR that changes it (`action`, as the
    audit names it); a refusal of a change to a CR the mirror holds is audited, with its
    uid. A name that is no CR's is refused alike but not audited: else a viewer could write
    entries naming any object. A namespace the person has no role in stays a 404,
    unaudited: nothing there is confirmed to them, not even a refusal."""

    def decorator(view: View) -> View:
        @wraps(view)
        def wrapped(request: DashboardRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            try:
                role_check(request, Role.OPERATOR, kwargs["namespace"])
            except PermissionDenied as refused:
                info = kind_get(kwargs["controller"])
                namespace, name = kwargs["namespace"], kwargs["name"]
                if cr := cr_get(kind=info.kind, namespace=namespace, name=name):
                    audit_record(
                        user=request.user, action=action, info=info, namespace=namespace,
                        name=name, uid=cr.uid, result=AuditEntry.Result.REJECTED,
                        message=f"Refused by opsboard, nothing sent to the cluster. {refused}",
                    )  # fmt: skip
                raise
            return view(request, *args, **kwargs)

        return login_required(wrapped)

    return decorator
