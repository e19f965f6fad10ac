"""Logging in: the local password form (unless switched off) beside single sign-on."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse


def login_options(request: HttpRequest) -> dict[str, Any]:
    """Template context: which ways of logging in this installation offers."""
    return {
        "local_login": settings.OPSBOARD_LOCAL_LOGIN,
        "sso": settings.OPSBOARD_OIDC_NAME if settings.OPSBOARD_OIDC_ISSUER else "",
    }


class LoginView(auth_views.LoginView):
    """Django's login view; with local passwords switched off, a posted password is
    refused whatever it is (only single sign-on logs in)."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not settings.OPSBOARD_LOCAL_LOGIN:
            context = self.get_context_data(
                lockout="Local passwords are switched off here: log in with single sign-on."
            )
            return self.render_to_response(context, status=403)
        return super().post(request, *args, **kwargs)
