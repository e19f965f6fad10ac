"""Single sign-on against the real test provider, over HTTP: password lockouts leave it
alone."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from opsboard.audit.models import AuditEntry
from tests.accounts.sso_http import (
    password_login,
    provider_sign_in,
    sso_begin,
)
from tests.fixtures.oidc import OidcProvider

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_address_locked_by_password_failures_still_logs_in_with_sso(
    live_server: Any, sso: OidcProvider
) -> None:
    base = live_server.url
    sso.set_groups("pat", ["platform-admins"])
    guesser = requests.Session()
    for _ in range(5):
        password_login(guesser, base, "lou", "wrong")
    assert password_login(guesser, base, "lou", "wrong").status_code == 429

    # Someone else behind the same address, and lou herself: the provider vouches for them.
    for login in ("pat", "lou"):
        http = requests.Session()
        landed = provider_sign_in(http, sso_begin(http, base), login)
        assert landed.status_code == 200 and landed.url == f"{base}/", landed.text
        assert "Overview" in landed.text and login in landed.text

    # Neither was counted, nor cleared the lockout: passwords stay refused.
    assert password_login(requests.Session(), base, "pat", "wrong").status_code == 429
    assert AuditEntry.objects.filter(action=AuditEntry.Action.LOCKOUT).count() == 1
