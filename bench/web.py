"""The bench's viewer account on a stack's web server, and a logged-in HTTP session."""

from __future__ import annotations

import secrets

import requests

from bench.stack import Stack, StackError

USERNAME = "bench"


def viewer_password(stack: Stack) -> str:
    """Creates the viewer once per stack (scenarios handed one fleet share it)."""
    if not stack.web_password:
        password = secrets.token_urlsafe(16)
        stack.manage("opsboard_user", USERNAME, "--role", "viewer",
                     extra_env={"OPSBOARD_USER_PASSWORD": password})  # fmt: skip
        stack.web_password = password
    return stack.web_password


def login(stack: Stack) -> requests.Session:
    password = viewer_password(stack)
    session = requests.Session()
    url = f"{stack.web_url}/accounts/login/"
    session.get(url, timeout=10).raise_for_status()
    response = session.post(
        url,
        data={"username": USERNAME, "password": password,
              "csrfmiddlewaretoken": session.cookies.get("csrftoken", "")},
        headers={"Referer": url},
        timeout=10,
        allow_redirects=False,
    )  # fmt: skip
    if response.status_code != 302:
        raise StackError(f"login failed: HTTP {response.status_code}")
    return session
