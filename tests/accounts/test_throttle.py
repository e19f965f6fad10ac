"""Throttled logins: after five failures for one username or from one address, logins are
refused with the time to wait, until the lockout expires or an admin lifts it; each lockout,
and each one lifted, is audited once."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
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
    assert entries[0].message == (
        "Logins locked out after 5 failures from 10.0.3.7 for 300 s: "
        "locked user vera and address 10.0.3.7"
    )


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


def _age(seconds: float, **match: str) -> None:
    """The matching attempts happened `seconds` earlier (as the clock would age them)."""
    for attempt in AccessAttempt.objects.filter(**match):
        attempt.attempt_time -= timedelta(seconds=seconds)
        attempt.save()


def _stated_end(response) -> str:
    found = re.search(r"\(at (\d\d:\d\d:\d\d) UTC\)", response.content.decode())
    assert found, response.content.decode()
    return found.group(1)


def test_other_names_posted_during_an_address_lockout_add_no_audit_entry(
    viewer: User, operator: User
) -> None:
    client = Client()
    for _ in range(5):
        _login(client, viewer.username, "wrong", address="10.0.4.1")
    for name, password in [(operator.username, PASSWORD), ("nobody1", "x"),
                           ('=HYPERLINK("http://attacker.example/","open")', "x")]:  # fmt: skip
        assert _login(client, name, password, address="10.0.4.1").status_code == 429
    entries = AuditEntry.objects.filter(action=AuditEntry.Action.LOCKOUT)
    assert [e.username for e in entries] == [viewer.username]


def test_a_lockout_by_names_that_are_no_account_names_the_last_as_no_account() -> None:
    client = Client()
    for i in range(5):
        _login(client, f"=cmd|' /C calc'!A{i} and a long tail to cut {'x' * 200}", "wrong",
               address="10.0.4.2")  # fmt: skip
    entries = AuditEntry.objects.filter(action=AuditEntry.Action.LOCKOUT)
    assert [e.username for e in entries] == [""], "not an account: not the entry's user"
    assert entries[0].message == (
        "Logins locked out after 5 failures from 10.0.4.2 for 300 s: locked address 10.0.4.2;"
        """ the last name tried: "=cmd|' /C calc'!A4 and a long tail to c…" (not an account)"""
    )


def test_a_lockout_by_a_name_shared_by_everyone_on_an_address_says_which_and_who_lifts_it(
    operator: User,
) -> None:
    """The walk-through's laptop: five failures as "ghost" lock the address, and with it
    everyone on it; the page says it is the address, not their account."""
    client = Client()
    for _ in range(5):
        _login(client, "ghost", "wrong", address="10.0.6.1")
    [entry] = AuditEntry.objects.filter(action=AuditEntry.Action.LOCKOUT)
    assert entry.username == ""
    assert entry.message.endswith('locked user "ghost" (not an account) and address 10.0.6.1'), (
        entry.message
    )
    refused = _login(client, operator.username, PASSWORD, address="10.0.6.1")
    assert refused.status_code == 429
    text = refused.content.decode()
    assert "Too many failed logins from your address (10.0.6.1), whatever the username." in text
    assert "ask an admin to lift it now: manage.py opsboard_unlock --address 10.0.6.1." in text
    assert AuditEntry.objects.filter(action=AuditEntry.Action.LOCKOUT).count() == 1


def test_a_username_lockout_says_it_is_that_name_s_from_any_address(viewer: User) -> None:
    client = Client()
    for i in range(5):
        _login(client, viewer.username, "wrong", address=f"10.0.7.{i}")
    text = _login(client, viewer.username, PASSWORD, address="10.0.7.9").content.decode()
    assert "Too many failed logins for the username vera, from any address." in text
    assert "manage.py opsboard_unlock --username vera." in text
    [entry] = AuditEntry.objects.filter(action=AuditEntry.Action.LOCKOUT)
    assert entry.username == "vera" and entry.message.endswith(": locked user vera")


def test_a_lockout_spread_over_usernames_counts_down_to_when_it_really_ends(
    operator: User,
) -> None:
    client = Client()
    for _ in range(4):
        _login(client, "spray1", "wrong", address="10.0.5.1")
    locked = _login(client, "spray2", "wrong", address="10.0.5.1")
    assert locked.status_code == 429
    # It ends when spray1's four failures age out: then the address is under the limit.
    spray1 = AccessAttempt.objects.get(username="spray1")
    assert _stated_end(locked) == f"{spray1.attempt_time + timedelta(seconds=300):%H:%M:%S}"
    # A minute passes: the time left shrinks, and the end it names moves with the clock.
    _age(60, ip_address="10.0.5.1")
    later = _login(client, "spray3", "wrong", address="10.0.5.1")
    assert later.status_code == 429 and int(later["Retry-After"]) <= 240
    spray1.refresh_from_db()
    assert _stated_end(later) == f"{spray1.attempt_time + timedelta(seconds=300):%H:%M:%S}"
    refused = _login(client, operator.username, PASSWORD, address="10.0.5.1")
    assert _stated_end(refused) == _stated_end(later)  # refused attempts do not extend it
    assert not AccessAttempt.objects.filter(username__in=["spray3", operator.username]).exists()
    # Still locked 30 s before that end, open once it has passed.
    _age(int(refused["Retry-After"]) - 30, ip_address="10.0.5.1")
    assert _login(client, operator.username, PASSWORD, address="10.0.5.1").status_code == 429
    _age(31, username="spray1")
    assert _login(client, operator.username, PASSWORD, address="10.0.5.1").status_code == 302


def test_an_admin_lifts_a_username_s_lockout_and_the_audit_says_so(
    viewer: User, admin_client_: Client
) -> None:
    client = Client()
    for i in range(5):
        _login(client, viewer.username, "wrong", address=f"10.0.4.{i}")
    assert _login(client, viewer.username, PASSWORD).status_code == 429
    call_command("opsboard_unlock", "--username", viewer.username)
    assert _login(client, viewer.username, PASSWORD).status_code == 302
    [entry] = AuditEntry.objects.filter(action=AuditEntry.Action.UNLOCK)
    by = "manage.py opsboard_unlock"
    assert (entry.username, entry.name, entry.result) == (by, "vera", "applied")
    assert entry.message == (
        f"Lifted the lockout of user vera: cleared 5 failure record(s) (through {by})"
    )
    html = admin_client_.get("/audit/").content.decode()
    assert "lockout lifted" in html and "user vera" in html


def test_an_admin_lifts_an_address_s_lockout(viewer: User, operator: User) -> None:
    client = Client()
    for i in range(5):
        _login(client, f"guess{i}", "wrong", address="10.0.5.1")
    assert _login(client, operator.username, PASSWORD, address="10.0.5.1").status_code == 429
    call_command("opsboard_unlock", "--address", "10.0.5.1")
    assert _login(client, operator.username, PASSWORD, address="10.0.5.1").status_code == 302
    [entry] = AuditEntry.objects.filter(action=AuditEntry.Action.UNLOCK)
    assert entry.name == "" and "of address 10.0.5.1: cleared 5 failure" in entry.message


def test_unlocking_needs_a_username_or_an_address() -> None:
    with pytest.raises(CommandError, match="--username NAME and/or --address ADDRESS"):
        call_command("opsboard_unlock")
    assert not AuditEntry.objects.filter(action=AuditEntry.Action.UNLOCK).exists()
