"""Throttled logins: after five failures for one username or from one address, logins are
refused with the time to wait, until the lockout expires; each lockout is audited once."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.test import Client, RequestFactory

from opsboard.accounts.throttle import client_address, wait_text
from opsboard.audit.models import AuditEntry
from tests.accounts.users import PASSWORD

pytestmark = pytest.mark.django_db


def _login(client: Client, username: str, password: str, address: str = "10.0.0.1"):
    return client.post(
        "/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address
    )


def test_the_first_four_failures_are_answered_as_a_plain_mismatch(viewer: User) -> None:
    client = Client()
    for _ in range(4):
        response = _login(client, viewer.username, "wrong")
        assert response.status_code == 200
        assert b"did not match" in response.content
    assert _login(client, viewer.username, PASSWORD).status_code == 302  # still allowed


def test_the_fifth_failure_locks_out_and_the_sixth_names_the_time_to_wait(viewer: User) -> None:
    client = Client()
    for _ in range(5):
        response = _login(client, viewer.username, "wrong")
    assert response.status_code == 429
    sixth = _login(client, viewer.username, PASSWORD)  # even the right password
    assert sixth.status_code == 429
    text = sixth.content.decode()
    assert "Too many failed logins" in text
    # The 5 min lockout started at the fifth failure: what is left, rounded up, is at most 5 min.
    assert re.search(r"Try again in (4 min \d+ s|5 min 0 s)", text), text
    assert 240 < int(sixth["Retry-After"]) <= 300
    assert "_auth_user_id" not in client.session


def test_a_lockout_is_per_username_from_any_address(viewer: User) -> None:
    client = Client()
    for i in range(5):
        _login(client, viewer.username, "wrong", address=f"10.0.1.{i}")
    assert _login(client, viewer.username, PASSWORD, address="10.9.9.9").status_code == 429


def test_a_lockout_is_per_address_for_any_username(viewer: User, operator: User) -> None:
    client = Client()
    for i in range(5):
        _login(client, f"guess{i}", "wrong", address="10.0.2.1")
    assert _login(client, operator.username, PASSWORD, address="10.0.2.1").status_code == 429
    assert _login(client, operator.username, PASSWORD, address="10.0.2.2").status_code == 302


def test_the_lockout_expires(viewer: User) -> None:
    client = Client()
    for _ in range(5):
        _login(client, viewer.username, "wrong")
    assert _login(client, viewer.username, PASSWORD).status_code == 429
    # Five minutes pass (the attempts age, as the clock would age them).
    for attempt in AccessAttempt.objects.all():
        attempt.attempt_time -= timedelta(minutes=5, seconds=1)
        attempt.save()
    assert _login(client, viewer.username, PASSWORD).status_code == 302


def test_each_lockout_is_audited_once_with_the_address(viewer: User) -> None:
    client = Client()
    for _ in range(8):
        _login(client, viewer.username, "wrong", address="10.0.3.7")
    entries = AuditEntry.objects.filter(action=AuditEntry.Action.LOCKOUT)
    assert [(e.username, e.result) for e in entries] == [(viewer.username, "rejected")]
    assert "after 5 failures from 10.0.3.7 for 300 s" in entries[0].message


def test_the_lockout_settings_come_from_the_environment(viewer: User, settings) -> None:
    settings.AXES_FAILURE_LIMIT = 2
    client = Client()
    _login(client, viewer.username, "wrong")
    assert _login(client, viewer.username, "wrong").status_code == 429


def test_behind_trusted_proxies_the_address_comes_from_x_forwarded_for(settings) -> None:
    request = RequestFactory().get(
        "/", REMOTE_ADDR="10.1.1.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.9"
    )
    assert client_address(request) == "10.1.1.1"  # no proxy trusted: a client can forge it
    settings.OPSBOARD_LOGIN_TRUSTED_PROXIES = 1
    assert client_address(request) == "203.0.113.9"


def test_wait_text_reads_as_minutes_and_seconds() -> None:
    assert wait_text(timedelta(seconds=299.2)) == "5 min 0 s"
    assert wait_text(timedelta(seconds=42)) == "42 s"
    assert wait_text(timedelta(seconds=0)) == "1 s"
