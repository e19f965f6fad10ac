"""Local passwords and their switch, OPSBOARD_LOCAL_LOGIN: switched off, no password logs
anyone in, whichever view asks (ours, Django admin's, any other authenticate() caller)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponseRedirect
from django.shortcuts import resolve_url
from django.urls import reverse

PASSWORD_BACKEND = "opsboard.accounts.local_login.LocalPasswordBackend"


class LocalPasswordBackend(ModelBackend):
    """Django's username and password backend, refusing every password while local logins
    are off (its permission checks, which Django admin uses, stay)."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> User | None:
        if not settings.OPSBOARD_LOCAL_LOGIN:
            return None
        return super().authenticate(request, username, password, **kwargs)

    async def aauthenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> User | None:
        if not settings.OPSBOARD_LOCAL_LOGIN:  # Django's async path does not call the above
            return None
        return await super().aauthenticate(request, username, password, **kwargs)


def admin_login(request: HttpRequest) -> HttpResponseRedirect:
    """Django admin's own login form is not offered: its URL leads to opsboard's login page
    (single sign-on, the lockout messages), which then returns to where admin was going."""
    back = request.GET.get("next") or reverse("admin:index")
    return HttpResponseRedirect(f"{resolve_url(settings.LOGIN_URL)}?{urlencode({'next': back})}")
