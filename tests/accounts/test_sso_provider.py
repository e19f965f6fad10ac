"""Single sign-on against the real test provider, over HTTP: password lockouts leave it
alone, a provider that fails opsboard is named for what it did, and logging out of opsboard
ends the provider's session too."""

from __future__ import annotations

import socket
import time
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from django.test import Client

from opsboard.accounts import oidc
from opsboard.audit.models import AuditEntry
from tests.accounts.sso_http import (
    asks_for_login,
    form_submit,
    logout,
    password_login,
    provider_sign_in,
    sso_begin,
)
from tests.fixtures.oidc import OidcProvider

pytestmark = pytest.mark.django_db(transaction=True)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port  # closed again: connections to it are refused


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


def test_a_wrong_client_secret_says_the_provider_refused_opsboards_credentials(
    live_server: Any, sso: OidcProvider, settings: Any
) -> None:
    settings.OIDC_RP_CLIENT_SECRET = "wrong-secret"
    http = requests.Session()
    page = provider_sign_in(http, sso_begin(http, live_server.url), "tina")
    assert page.status_code == 502
    assert "refused opsboard&#x27;s client credentials (401 invalid_client)" in page.text
    assert "OPSBOARD_OIDC_CLIENT_ID and OPSBOARD_OIDC_CLIENT_SECRET" in page.text
    assert "could not be reached" not in page.text and "Get Token Error" not in page.text


def test_a_provider_that_cannot_be_reached_is_a_502_without_the_librarys_text(
    live_server: Any, sso: OidcProvider
) -> None:
    dead = f"http://127.0.0.1:{_closed_port()}"
    # At the code exchange: the provider's token endpoint is down after its login form.
    oidc._discovered[sso.issuer] = (time.monotonic(), replace(oidc.provider(),
                                    token_endpoint=f"{dead}/token"))  # fmt: skip
    http = requests.Session()
    page = provider_sign_in(http, sso_begin(http, live_server.url), "tina")
    assert page.status_code == 502
    assert "The identity provider could not be reached" in page.text
    assert "HTTPConnectionPool" not in page.text and "Max retries" not in page.text


def test_discovery_that_cannot_be_reached_is_a_502(settings: Any) -> None:
    settings.OPSBOARD_OIDC_ISSUER = f"http://127.0.0.1:{_closed_port()}"
    settings.OIDC_RP_CLIENT_ID, settings.OIDC_RP_CLIENT_SECRET = "opsboard", "secret"
    oidc._discovered.clear()
    page = Client().get("/oidc/authenticate/")
    assert page.status_code == 502
    text = page.content.decode()
    assert "could not be reached (its discovery document at" in text
    assert "HTTPConnectionPool" not in text


def test_logging_out_after_sso_ends_the_providers_session_too(
    live_server: Any, sso: OidcProvider
) -> None:
    base = live_server.url
    sso.set_groups("tina", ["team-a-ops"])
    http = requests.Session()
    assert provider_sign_in(http, sso_begin(http, base), "tina").url == f"{base}/"

    ask = logout(http, base)  # to the provider's "Do you want to sign-out" page
    sent_to = next(r for r in ask.history if r.status_code == 302).headers["Location"]
    query = parse_qs(urlsplit(sent_to).query)
    assert sent_to.startswith(f"{sso.issuer}/session/end")
    assert query["post_logout_redirect_uri"] == [f"{base}/accounts/login/"]
    assert query["id_token_hint"][0].count(".") == 2  # the ID token of this login
    back = form_submit(http, ask, {"logout": "yes"})  # "Yes, sign me out"
    assert back.url == f"{base}/accounts/login/" and "Log in to opsboard" in back.text

    assert asks_for_login(sso_begin(http, base))  # the provider asks for a password again
