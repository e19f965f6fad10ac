"""Single sign-on in the browser against a real OpenID provider (npm's oidc-provider) on
127.0.0.1: the code flow with PKCE, nonce and state; roles from the groups claim, changed
at the next login; a wrong issuer and a replayed callback refused with a clear page."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from django.contrib.auth.models import User

from opsboard.accounts.access import access_of
from opsboard.accounts.models import SsoIdentity
from opsboard.accounts.roles import Role
from tests.browser.conftest import screenshot
from tests.fixtures.oidc import OidcProvider

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _sso_login(page, base: str, login: str, *, op_form: bool = True) -> None:
    page.goto(f"{base}/accounts/login/")
    page.get_by_role("link", name="Log in with Test IdP").click()
    if op_form:  # the provider's own login form (any password: a development provider)
        page.locator("input[name=login]").fill(login)
        page.locator("input[name=password]").fill("anything")
        page.get_by_role("button", name="Sign-in").click()
    page.get_by_role("heading", name="Overview").wait_for()


def test_an_sso_login_lands_with_the_mapped_roles_and_group_changes_apply_next_time(
    browser, live_server, sso: OidcProvider
) -> None:
    sso.set_groups("tina", ["team-a-ops", "team-b-view", "unrelated"])
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if r.url.startswith(sso.issuer) else None)

    _sso_login(page, live_server.url, "tina")
    header = page.locator("header").inner_text()
    assert "tina" in header and "operator in team-a, viewer in team-b" in header
    screenshot(page, "sso-landed")
    # The authorization request carried a state, a nonce and an S256 PKCE challenge (and
    # the provider requires PKCE, so the exchange proved the verifier).
    auth = parse_qs(urlparse(next(u for u in asked if "/auth?" in u)).query)
    assert auth["code_challenge_method"] == ["S256"] and len(auth["code_challenge"][0]) == 43
    assert auth["state"][0] and auth["nonce"][0] and auth["response_type"] == ["code"]

    tina = User.objects.get(sso_identity__subject="tina")
    assert SsoIdentity.objects.get(user=tina).issuer == sso.issuer
    assert access_of(tina).role_in("team-a") == Role.OPERATOR
    assert access_of(tina).role_in("team-c") is None

    # The provider moves tina to the platform admins: her next login makes her admin, and
    # the team grants the groups no longer give are gone. Logging out of opsboard ends her
    # session at the provider too (it asks to confirm): the next login asks her password.
    sso.set_groups("tina", ["platform-admins"])
    page.get_by_role("button", name="Log out").click()
    page.get_by_role("button", name="Yes, sign me out").click()
    page.get_by_role("heading", name="Log in to opsboard").wait_for()
    _sso_login(page, live_server.url, "tina", op_form=True)
    assert "admin" in page.locator("header").inner_text()
    tina = User.objects.get(pk=tina.pk)
    assert access_of(tina).everywhere == Role.ADMIN and not tina.namespace_grants.exists()
    assert tina.is_staff
    context.close()


def test_a_replayed_callback_is_refused_and_logs_nobody_in(browser, live_server,
                                                           sso: OidcProvider) -> None:  # fmt: skip
    sso.set_groups("rita", ["team-b-view"])
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    callbacks: list[str] = []
    page.on("request", lambda r: callbacks.append(r.url) if "/oidc/callback/" in r.url else None)
    _sso_login(page, live_server.url, "rita")
    other = browser.new_context().new_page()  # another browser, with the stolen link
    other.goto(callbacks[0])
    reason = other.locator("#sso-reason")
    reason.wait_for()
    assert other.get_by_role("heading", name="Single sign-on refused").is_visible()
    assert "did not log anyone in" in reason.inner_text()
    other.goto(f"{live_server.url}/")
    assert "/accounts/login/" in other.url
    other.context.close()
    context.close()


def test_a_wrong_issuer_is_refused_with_a_clear_page(browser, live_server, sso: OidcProvider,
                                                     settings) -> None:  # fmt: skip
    # The provider answers at localhost but calls itself 127.0.0.1: not the issuer we trust.
    settings.OPSBOARD_OIDC_ISSUER = f"http://localhost:{sso.port}"
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_role("link", name="Log in with Test IdP").click()
    reason = page.locator("#sso-reason").inner_text()
    assert "Wrong issuer" in reason and f"'{sso.issuer}'" in reason
    assert "OPSBOARD_OIDC_ISSUER" in reason
    screenshot(page, "sso-wrong-issuer")
    context.close()
