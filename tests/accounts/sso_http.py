"""Single sign-on driven over HTTP as a browser drives it, against the live server and the
real test provider: opsboard's button, the provider's own forms, the callback (requests
follows every redirect, and keeps both sites' cookies)."""

from __future__ import annotations

import html
import re
from urllib.parse import urljoin

import requests

TIMEOUT = 15


def sso_begin(http: requests.Session, base: str) -> requests.Response:
    """ "Log in with …": the provider's login form, or opsboard again if the provider
    still knows the browser."""
    return http.get(f"{base}/oidc/authenticate/", timeout=TIMEOUT)


def asks_for_login(page: requests.Response) -> bool:
    return 'name="login"' in page.text and 'name="password"' in page.text


def form_submit(
    http: requests.Session, page: requests.Response, fields: dict[str, str]
) -> requests.Response:
    """Posts the page's first form: its hidden fields, and `fields`."""
    form = re.search(r"<form[^>]*>.*?</form>", page.text, re.S)
    assert form, page.text
    action = re.search(r'action="([^"]*)"', form.group(0))
    hidden = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form.group(0))
    data = {name: html.unescape(value) for name, value in hidden} | fields
    url = urljoin(page.url, html.unescape(action.group(1)) if action else page.url)
    return http.post(url, data=data, timeout=TIMEOUT)


def provider_sign_in(
    http: requests.Session, page: requests.Response, login: str
) -> requests.Response:
    """Signs in on the provider's login form (a development provider: any password)."""
    assert asks_for_login(page), page.text
    return form_submit(http, page, {"login": login, "password": "anything"})


def csrf_token(page: requests.Response) -> str:
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert found, page.text
    return found.group(1)


def password_login(
    http: requests.Session, base: str, username: str, password: str
) -> requests.Response:
    page = http.get(f"{base}/accounts/login/", timeout=TIMEOUT)
    data = {"username": username, "password": password, "csrfmiddlewaretoken": csrf_token(page)}
    return http.post(f"{base}/accounts/login/", data=data, timeout=TIMEOUT)


def logout(http: requests.Session, base: str) -> requests.Response:
    page = http.get(f"{base}/", timeout=TIMEOUT)
    data = {"csrfmiddlewaretoken": csrf_token(page)}
    return http.post(f"{base}/accounts/logout/", data=data, timeout=TIMEOUT)
