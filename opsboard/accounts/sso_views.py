"""The two SSO endpoints (mozilla-django-oidc's views) with refusals a person can read:
a wrong issuer or audience, a replayed or forged state, a provider that cannot be reached
or that refuses opsboard's client credentials."""

from __future__ import annotations

from typing import Any

import requests
from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from mozilla_django_oidc.views import (
    OIDCAuthenticationCallbackView,
    OIDCAuthenticationRequestView,
)

from opsboard.accounts.oidc import SsoRefused, provider, provider_failure


def sso_refused(request: HttpRequest, reason: str, status: int = 403) -> HttpResponse:
    return render(request, "registration/sso_refused.html", {"reason": reason}, status=status)


class SsoAuthenticateView(OIDCAuthenticationRequestView):  # type: ignore[misc]
    """Sends the browser to the provider with a state, a nonce and a PKCE challenge."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super(OIDCAuthenticationRequestView, self).__init__(*args, **kwargs)

    def get(self, request: HttpRequest) -> HttpResponseBase:
        try:
            self.OIDC_OP_AUTH_ENDPOINT = provider().authorization_endpoint
        except SsoRefused as exc:
            return sso_refused(request, str(exc), exc.status)
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        response: HttpResponseBase = super().get(request)
        return response


class SsoCallbackView(OIDCAuthenticationCallbackView):  # type: ignore[misc]
    """Where the provider sends the browser back; checks state, then the code exchange
    (with the PKCE verifier), the ID token's signature, nonce, issuer and audience."""

    def get(self, request: HttpRequest) -> HttpResponseBase:
        try:
            response: HttpResponseBase = super().get(request)
        except SsoRefused as exc:
            return sso_refused(request, str(exc), exc.status)
        except SuspiciousOperation as exc:  # a state or nonce that does not match
            return sso_refused(request, str(exc))
        except requests.RequestException as exc:  # the code exchange, userinfo, the keys
            failed = provider_failure(exc, asking="the login's tokens")
            return sso_refused(request, str(failed), failed.status)
        return response

    def login_failure(self) -> HttpResponse:
        said = self.request.GET.get("error_description") or self.request.GET.get("error")
        reason = (
            f"The identity provider refused: {said}."
            if said
            else "The identity provider's answer did not log anyone in (an expired or "
            "already used login link, or an account without a subject)."
        )
        return sso_refused(self.request, reason)
