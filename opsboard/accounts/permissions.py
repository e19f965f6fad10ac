"""Server-side role checks for views: a missing role is a 403, never a hidden button only."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.http.response import HttpResponseBase

from opsboard.accounts.roles import Role, has_role

View = Callable[..., HttpResponseBase]


def role_check(request: HttpRequest, role: Role) -> None:
    if not has_role(request.user, role):
        raise PermissionDenied(f"This needs the {role} role.")


def role_required(role: Role) -> Callable[[View], View]:
    """Anonymous users go to the login page; signed-in users without `role` get a 403."""

    def decorator(view: View) -> View:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            role_check(request, role)
            return view(request, *args, **kwargs)

        return login_required(wrapped)

    return decorator
