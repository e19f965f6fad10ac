"""Throttled logins through django-axes: after OPSBOARD_LOGIN_FAILURE_LIMIT failures for one
username or from one address, logins from it are refused until the lockout expires; the
refusal says how long to wait. The audit records each lockout (opsboard.audit.receivers)."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from axes.helpers import get_client_username, get_cool_off
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.db.models import Max, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone


def client_address(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or behind N trusted proxies (an ingress), the
    address the outermost of them saw, from X-Forwarded-For."""
    proxies: int = settings.OPSBOARD_LOGIN_TRUSTED_PROXIES
    forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    if proxies and len(forwarded) >= proxies and forwarded[-proxies]:
        return str(forwarded[-proxies])
    return str(request.META.get("REMOTE_ADDR", ""))


def locked_until(*, username: str, address: str) -> datetime | None:
    """When the lockout of this username or address ends (None: not locked)."""
    cool_off = get_cool_off()
    if cool_off is None:
        return None
    match = Q(ip_address=address) | (Q(username=username) if username else Q(pk__in=[]))
    locked = AccessAttempt.objects.filter(
        match, failures_since_start__gte=settings.AXES_FAILURE_LIMIT
    )
    last = locked.aggregate(last=Max("attempt_time"))["last"]
    return None if last is None else last + cool_off


def wait_text(delta: timedelta) -> str:
    seconds = max(1, math.ceil(delta.total_seconds()))
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


def lockout_response(
    request: HttpRequest, original_response: Any = None, credentials: Any = None
) -> HttpResponse:
    """The login page again, with status 429 and when to try again."""
    username = get_client_username(request, credentials) or ""
    until = locked_until(username=username, address=client_address(request))
    now = timezone.now()
    wait = (until - now) if until and until > now else get_cool_off() or timedelta(0)
    message = (
        f"Too many failed logins for this account or from this address. "
        f"Try again in {wait_text(wait)} (at {(now + wait):%H:%M:%S} UTC)."
    )
    form = AuthenticationForm(request, initial={"username": username})
    context = {"form": form, "lockout": message, "retry_after": math.ceil(wait.total_seconds())}
    response = render(request, "registration/login.html", context, status=429)
    response["Retry-After"] = str(max(1, math.ceil(wait.total_seconds())))
    return response
