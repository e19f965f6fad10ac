"""Logging out ends opsboard's session and, after a single sign-on login, the provider's
too (RP-initiated logout, when its discovery document has an end_session_endpoint): else
the next "Log in with …" on a shared machine logs the last person in without a password."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import resolve_url

from opsboard.accounts.oidc import SsoRefused, provider


class LogoutView(auth_views.LogoutView):
    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        id_token = request.session.get("oidc_id_token")  # kept by an SSO login only
        response = super().post(request, *args, **kwargs)
        if not id_token:
            return response
        try:
            end = provider().end_session_endpoint
        except SsoRefused:
            return response  # opsboard's session is over; the provider's is out of reach
        if not end:
            return response
        query = urlencode({
            "id_token_hint": id_token,
            "client_id": settings.OIDC_RP_CLIENT_ID,
            "post_logout_redirect_uri": request.build_absolute_uri(resolve_url(settings.LOGIN_URL)),
        })  # fmt: skip
        return HttpResponseRedirect(f"{end}{'&' if '?' in end else '?'}{query}")
