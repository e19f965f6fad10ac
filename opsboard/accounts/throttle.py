"""Throttled password logins through django-axes: after OPSBOARD_LOGIN_FAILURE_LIMIT failures
for one username (from any address) or from one address (for any username), password logins
for it are refused until the lockout expires; the refusal says which limit holds, until
when, and how an admin lifts it early (manage.py opsboard_unlock). The audit records each
lockout (opsboard.audit.receivers); password_throttle keeps SSO out of it."""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from axes.helpers import get_client_username, get_cool_off
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.db.models import QuerySet
from django.dispatch import Signal
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

# Sent with username and address (either may be ""), cleared (how many failure records) and
# by (how: "manage.py opsboard_unlock") when someone lifts a lockout early, for the audit.
lockout_lifted = Signal()


def lockout_subject(username: str, address: str) -> str:
    """Whose lockout is meant: "user tina", "address 10.0.0.7", or both."""
    named = (username and f"user {username}", address and f"address {address}")
    return " and ".join(part for part in named if part)


def client_address(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or behind N trusted proxies (an ingress), the
    address the outermost of them saw, from X-Forwarded-For."""
    proxies: int = settings.OPSBOARD_LOGIN_TRUSTED_PROXIES
    forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    if proxies and len(forwarded) >= proxies and forwarded[-proxies]:
        return str(forwarded[-proxies])
    return str(request.META.get("REMOTE_ADDR", ""))


@dataclass(frozen=True)
class Lockout:
    """Which of the two limits hold for a login, and until when (None: not reached)."""

    username: str
    address: str
    username_until: datetime | None
    address_until: datetime | None

    @property
    def until(self) -> datetime | None:
        ends = (self.username_until, self.address_until)
        return max((end for end in ends if end is not None), default=None)


def lockout_of(*, username: str, address: str) -> Lockout:
    """The lockouts of this username and of this address, as the failures stand now."""
    cool_off = get_cool_off()
    if cool_off is None:
        return Lockout(username, address, None, None)
    recent = AccessAttempt.objects.filter(attempt_time__gte=timezone.now() - cool_off)
    by_name = _lockout_end(recent.filter(username=username), cool_off) if username else None
    return Lockout(
        username, address, by_name, _lockout_end(recent.filter(ip_address=address), cool_off)
    )


def _lockout_end(attempts: QuerySet[AccessAttempt], cool_off: timedelta) -> datetime | None:
    """axes keeps one row per (username, address), stamped with its last failure, and
    locks while the rows of the last cool-off add up to the limit: so the lockout ends
    when the oldest of the newest rows that reach the limit ages out."""
    total = 0
    rows = attempts.order_by("-attempt_time").values_list("attempt_time", "failures_since_start")
    for at, failures in rows:
        total += failures
        if total >= settings.AXES_FAILURE_LIMIT:
            end: datetime = at + cool_off
            return end
    return None


def wait_text(delta: timedelta) -> str:
    seconds = max(1, math.ceil(delta.total_seconds()))
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


def _which_limit(lockout: Lockout) -> str:
    """Whose failures refuse this login: one who shares an address (a laptop, an office
    behind one NAT) is refused for the failures of others, and should be told so."""
    if lockout.username_until and lockout.address_until:
        return f"for the username {lockout.username} and from your address ({lockout.address})"
    if lockout.username_until:
        return f"for the username {lockout.username}, from any address"
    if lockout.address_until:
        return f"from your address ({lockout.address}), whatever the username"
    return "for this username or from this address"


def _how_to_lift(lockout: Lockout) -> str:
    options = [
        f"--username {shlex.quote(lockout.username)}" if lockout.username_until else "",
        f"--address {shlex.quote(lockout.address)}" if lockout.address_until else "",
    ]
    if not any(options):
        return "."
    command = " ".join(["manage.py opsboard_unlock", *filter(None, options)])
    return f", or ask an admin to lift it now: {command}."


def lockout_response(
    request: HttpRequest, original_response: Any = None, credentials: Any = None
) -> HttpResponse:
    """The login page again, with status 429 and when to try again."""
    username = get_client_username(request, credentials) or ""
    lockout = lockout_of(username=username, address=client_address(request))
    until, now = lockout.until, timezone.now()
    if until is None or until <= now:  # unlocked since axes refused: the full cool-off
        until = now + (get_cool_off() or timedelta(0))
    wait = until - now
    message = (
        f"Too many failed logins {_which_limit(lockout)}. "
        f"Try again in {wait_text(wait)} (at {until:%H:%M:%S} UTC){_how_to_lift(lockout)}"
    )
    form = AuthenticationForm(request, initial={"username": username})
    context = {"form": form, "lockout": message, "retry_after": math.ceil(wait.total_seconds())}
    response = render(request, "registration/login.html", context, status=429)
    response["Retry-After"] = str(max(1, math.ceil(wait.total_seconds())))
    return response
