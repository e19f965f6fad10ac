"""Server-side role checks for views: a missing role is a 403 that says why and who can
grant it, never a hidden button only; a namespace the person cannot see is a 404.

Views of one object take `namespace` from the URL: `role_required` then checks the role
in that namespace. NamespaceScopeMiddleware makes every such URL a 404 for a person with
no role there, so views added later cannot forget it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.http.response import HttpResponseBase

from opsboard.accounts.access import access_of, refusal
from opsboard.accounts.roles import Role

View = Callable[..., HttpResponseBase]


def namespace_check(request: HttpRequest, namespace: str) -> None:
    if not access_of(request.user).allows(Role.VIEWER, namespace):
        raise Http404("No such object, or not in a namespace you can see.")


def role_check(request: HttpRequest, role: Role, namespace: str | None = None) -> None:
    """`role` in `namespace`, or (no namespace) `role` globally or in some namespace."""
    access = access_of(request.user)
    if namespace is not None:
        namespace_check(request, namespace)
        allowed = access.allows(role, namespace)
    else:
        allowed = access.anywhere(role)
    if not allowed:
        raise PermissionDenied(refusal(access, role, namespace))


def role_required(role: Role) -> Callable[[View], View]:
    """Anonymous users go to the login page; signed-in users without `role` (in the URL's
    namespace, if it has one) get a 403 naming the role, the namespace and who can grant."""

    def decorator(view: View) -> View:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            role_check(request, role, kwargs.get("namespace"))
            return view(request, *args, **kwargs)

        return login_required(wrapped)

    return decorator


class NamespaceScopeMiddleware:
    """Any view whose URL names a namespace is a 404 to a person without a role there."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view: View, args: Any, kwargs: dict[str, Any]
    ) -> None:
        namespace = kwargs.get("namespace")
        if isinstance(namespace, str) and request.user.is_authenticated:
            namespace_check(request, namespace)
