"""django-axes' database handler, for password logins only: throttling is for password
guessing. A single sign-on login (the provider authenticated the person) is neither
refused during a lockout, nor counted as a failure, nor clears the failures on success."""

from __future__ import annotations

from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from django.http import HttpRequest

from opsboard.accounts.local_login import PASSWORD_BACKEND


def is_password_login(credentials: dict[str, Any] | None) -> bool:
    # axes' backend passes password=None for other logins; Django's user_login_failed
    # signal carries the password's key (its value masked) only when one was given.
    return credentials is not None and credentials.get("password") is not None


class PasswordLoginHandler(AxesDatabaseHandler):  # type: ignore[misc]
    def is_allowed(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> bool:
        if not is_password_login(credentials):
            return True
        allowed: bool = super().is_allowed(request, credentials)
        return allowed

    def user_login_failed(
        self,
        sender: Any,
        credentials: dict[str, Any],
        request: HttpRequest | None = None,
        **kwargs: Any,
    ) -> None:
        if not is_password_login(credentials):
            return
        if request is not None and getattr(request, "axes_locked_out", False):
            # Refused during a lockout: axes would signal user_locked_out again for each
            # such attempt (one audit entry per lockout, not per name an attacker posts).
            request.axes_credentials = credentials  # type: ignore[attr-defined]
            return
        super().user_login_failed(sender, credentials, request, **kwargs)

    def user_logged_in(self, sender: Any, request: HttpRequest, user: Any, **kwargs: Any) -> None:
        # Else one SSO login would wipe its address's failures, lockout included.
        if getattr(user, "backend", None) == PASSWORD_BACKEND:
            super().user_logged_in(sender, request, user, **kwargs)
