"""Single sign-on with OpenID Connect, through mozilla-django-oidc.

The authorization code flow with PKCE, a nonce and a state (the library's, all on); the
provider's endpoints come from its discovery document, whose issuer must be the configured
one; the ID token must come from that issuer and be meant for this client. A person is
matched on (issuer, subject) and their roles follow the groups claim at each login
(OPSBOARD_OIDC_GROUP_ROLES).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import requests
from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from django.db.models import QuerySet
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from opsboard.accounts.models import SsoIdentity
from opsboard.accounts.sso_roles import sso_roles_apply

DISCOVERY_TTL = 300.0
logger = logging.getLogger(__name__)


class SsoRefused(SuspiciousOperation):
    """A login the identity provider's answer does not support: the message says why."""

    status = 403


class SsoProviderFailed(SsoRefused):
    """The provider could not be reached, or refused opsboard itself: a bad gateway."""

    status = 502


@dataclass(frozen=True)
class Provider:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    userinfo_endpoint: str
    jwks_uri: str
    end_session_endpoint: str = ""  # advertised for RP-initiated logout, if at all


_discovered: dict[str, tuple[float, Provider]] = {}


def provider() -> Provider:
    """The provider's endpoints from its discovery document, cached for a few minutes."""
    issuer: str = settings.OPSBOARD_OIDC_ISSUER
    if not issuer:
        raise SsoRefused("Single sign-on is not configured here (OPSBOARD_OIDC_ISSUER is unset).")
    cached = _discovered.get(issuer)
    if cached and time.monotonic() - cached[0] < DISCOVERY_TTL:
        return cached[1]
    url = f"{issuer}/.well-known/openid-configuration"
    try:
        response = requests.get(url, timeout=settings.OIDC_TIMEOUT)
        response.raise_for_status()
        doc = response.json()
    except (requests.RequestException, ValueError) as exc:
        raise provider_failure(exc, asking=f"its discovery document at {url}") from None
    said = str(doc.get("issuer", "")).rstrip("/")
    if said != issuer:
        raise SsoRefused(
            f"Wrong issuer: the identity provider at {issuer} says its issuer is {said!r}. "
            "An admin must set OPSBOARD_OIDC_ISSUER to exactly that (or fix the provider)."
        )
    keys = ("authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri")
    if missing := [k for k in keys if not doc.get(k)]:
        raise SsoRefused(f"The identity provider's discovery document lacks {', '.join(missing)}")
    found = Provider(
        issuer,
        authorization_endpoint=str(doc["authorization_endpoint"]),
        token_endpoint=str(doc["token_endpoint"]),
        userinfo_endpoint=str(doc["userinfo_endpoint"]),
        jwks_uri=str(doc["jwks_uri"]),
        end_session_endpoint=str(doc.get("end_session_endpoint") or ""),
    )
    _discovered[issuer] = (time.monotonic(), found)
    return found


def provider_failure(exc: Exception, *, asking: str) -> SsoProviderFailed:
    """What a person reads when the provider fails opsboard; the library's own text (urllib3's
    retries, the response body) goes to the log, for the admin."""
    logger.warning("The identity provider failed opsboard asking for %s: %s", asking, exc)
    response = getattr(exc, "response", None)
    if response is None:
        if isinstance(exc, requests.ConnectionError | requests.Timeout):
            return SsoProviderFailed(f"The identity provider could not be reached ({asking}).")
        return SsoProviderFailed(f"The identity provider's answer was unreadable ({asking}).")
    try:
        error = str(response.json().get("error", ""))
    except ValueError:
        error = ""
    if error == "invalid_client" or response.status_code == 401:
        return SsoProviderFailed(
            f"The identity provider refused opsboard's client credentials "
            f"({response.status_code} {error or 'unauthorized'}): an admin must check "
            "OPSBOARD_OIDC_CLIENT_ID and OPSBOARD_OIDC_CLIENT_SECRET against the client "
            "registered at the provider."
        )
    return SsoProviderFailed(
        f"The identity provider answered {response.status_code}"
        f"{f' ({error})' if error else ''} when asked for {asking}."
    )


def id_token_check(payload: dict[str, Any], *, issuer: str, client_id: str) -> None:
    """The ID token must come from our issuer and be meant for us (OIDC Core 3.1.3.7)."""
    iss = str(payload.get("iss", "")).rstrip("/")
    if iss != issuer:
        raise SsoRefused(
            f"Wrong issuer: the ID token was issued by {iss or 'nobody'!r}, "
            f"not by {issuer} (OPSBOARD_OIDC_ISSUER). Nobody was logged in."
        )
    aud = payload.get("aud")
    audiences = [aud] if isinstance(aud, str) else list(aud or [])
    if client_id not in audiences or (len(audiences) > 1 and payload.get("azp") != client_id):
        raise SsoRefused(
            f"Wrong audience: the ID token is meant for {', '.join(map(str, audiences)) or 'no one'}, "
            f"not for this opsboard (client id {client_id}). Nobody was logged in."
        )


class SsoBackend(OIDCAuthenticationBackend):  # type: ignore[misc]
    """mozilla-django-oidc's backend, with the endpoints read from discovery when a login
    needs them (Django builds a backend for every request of a signed-in person)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.UserModel = User
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.OIDC_RP_CLIENT_SECRET
        self.OIDC_RP_SIGN_ALGO = settings.OIDC_RP_SIGN_ALGO
        self.OIDC_RP_IDP_SIGN_KEY = getattr(settings, "OIDC_RP_IDP_SIGN_KEY", None)

    @property
    def OIDC_OP_TOKEN_ENDPOINT(self) -> str:
        return provider().token_endpoint

    @property
    def OIDC_OP_USER_ENDPOINT(self) -> str:
        return provider().userinfo_endpoint

    @property
    def OIDC_OP_JWKS_ENDPOINT(self) -> str:
        return provider().jwks_uri

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        payload: dict[str, Any] = super().verify_token(token, **kwargs)
        if "nonce" in kwargs:  # the ID token (a signed userinfo answer has no iss/aud rules)
            id_token_check(payload, issuer=provider().issuer, client_id=self.OIDC_RP_CLIENT_ID)
        return payload

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        return bool(claims.get("sub"))

    def filter_users_by_claims(self, claims: dict[str, Any]) -> QuerySet[User]:
        return User.objects.filter(
            sso_identity__issuer=provider().issuer, sso_identity__subject=claims["sub"]
        )

    @transaction.atomic
    def create_user(self, claims: dict[str, Any]) -> User:
        user = User.objects.create_user(_free_username(claims), email=claims.get("email") or "")
        SsoIdentity.objects.create(user=user, issuer=provider().issuer, subject=claims["sub"])
        return self.update_user(user, claims)

    @transaction.atomic
    def update_user(self, user: User, claims: dict[str, Any]) -> User:
        groups = claims.get(settings.OPSBOARD_OIDC_GROUPS_CLAIM) or []
        groups = [groups] if isinstance(groups, str) else [str(g) for g in groups]
        if (email := claims.get("email")) and email != user.email:
            user.email = email
            user.save(update_fields=["email"])
        SsoIdentity.objects.filter(user=user).update(groups=groups)
        sso_roles_apply(user=user, groups=groups, rules=settings.OPSBOARD_OIDC_GROUP_ROLES)
        return user


def _free_username(claims: dict[str, Any]) -> str:
    """preferred_username (or the email's name, or the subject), made unique: a local
    account of the same name is never taken over."""
    email = str(claims.get("email") or "")
    base = str(claims.get("preferred_username") or email.partition("@")[0] or claims["sub"])
    base = base[:140]
    name, n = base, 1
    while User.objects.filter(username=name).exists():
        n += 1
        name = f"{base}-sso{n if n > 2 else ''}"
    return name
