"""Sessions that end: a change to a person's role, namespace grants or active flag ends
their sessions at once; logout ends the session on the server; --revoke ends them by hand."""

from __future__ import annotations

from importlib import import_module
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import Client

from opsboard.accounts.models import LoginSession
from opsboard.accounts.roles import Role, grant_assign, role_assign
from tests.accounts.users import PASSWORD

pytestmark = pytest.mark.django_db


def _logged_in(user: User) -> Client:
    client = Client()
    response = client.post("/accounts/login/", {"username": user.username, "password": PASSWORD})
    assert response.status_code == 302
    assert client.get("/").status_code == 200
    return client


def _signed_in(client: Client) -> bool:
    response = client.get("/")
    return response.status_code == 200 and "_auth_user_id" in client.session


def test_a_role_change_ends_every_session_of_that_person_at_once(operator: User,
                                                                 viewer: User) -> None:  # fmt: skip
    laptop, phone, other = _logged_in(operator), _logged_in(operator), _logged_in(viewer)
    role_assign(user=operator, role=Role.VIEWER)
    assert not _signed_in(laptop) and not _signed_in(phone)
    assert laptop.get("/").status_code == 302  # to the login page
    assert _signed_in(other)


def test_an_unchanged_role_ends_nothing(operator: User) -> None:
    client = _logged_in(operator)
    role_assign(user=operator, role=Role.OPERATOR)
    assert _signed_in(client)


def test_a_namespace_grant_given_or_taken_ends_the_sessions(viewer: User) -> None:
    client = _logged_in(viewer)
    grant_assign(user=viewer, namespace="team-a", role=Role.OPERATOR)
    assert not _signed_in(client)
    client = _logged_in(viewer)
    grant_assign(user=viewer, namespace="team-a", role=None)
    assert not _signed_in(client)


def test_deactivating_a_person_ends_their_sessions(viewer: User) -> None:
    client = _logged_in(viewer)
    viewer.is_active = False
    viewer.save()
    assert not _signed_in(client)


def test_editing_groups_in_the_admin_way_ends_the_sessions(viewer: User) -> None:
    client = _logged_in(viewer)
    viewer.groups.set([Group.objects.get(name="operator")])  # what the admin form does
    assert not _signed_in(client)


def test_a_login_elsewhere_or_a_profile_edit_ends_nothing(viewer: User) -> None:
    client = _logged_in(viewer)
    _logged_in(viewer)
    viewer.email = "vera@example.com"
    viewer.save()
    assert _signed_in(client)


def test_logout_ends_the_session_on_the_server(viewer: User) -> None:
    client = _logged_in(viewer)
    key = client.session.session_key
    store = import_module(settings.SESSION_ENGINE).SessionStore
    assert store().exists(key)
    client.post("/accounts/logout/")
    assert not store().exists(key)
    assert not LoginSession.objects.filter(session_key=key).exists()
    # The old cookie, replayed, is no session.
    replay = Client()
    replay.cookies[settings.SESSION_COOKIE_NAME] = key
    assert replay.get("/").status_code == 302


def test_revoke_ends_the_sessions_by_hand(viewer: User, capsys) -> None:
    first, second = _logged_in(viewer), _logged_in(viewer)
    call_command("opsboard_user", "--revoke", viewer.username)
    assert "Ended 2 session(s) of vera" in capsys.readouterr().out
    assert not _signed_in(first) and not _signed_in(second)


def test_sessions_that_expired_leave_no_record_behind(viewer: User) -> None:
    old = _logged_in(viewer)
    old_key = old.session.session_key
    store = import_module(settings.SESSION_ENGINE).SessionStore
    store().delete(old_key)  # as `clearsessions` does once it has expired
    _logged_in(viewer)
    assert not LoginSession.objects.filter(session_key=old_key).exists()
    assert LoginSession.objects.filter(user=viewer).count() == 1


def test_a_page_whose_session_ended_is_sent_to_the_login_page_not_fed_it(viewer: User) -> None:
    """htmx's request would follow a redirect and swap the login page into the page: it is
    told to load the login page instead, to come back to the page, not to its fragment."""
    page = _logged_in(viewer)
    call_command("opsboard_user", "--revoke", viewer.username)
    poll = page.get(
        "/k/memcached/default/cache/live/?shown=x",
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL="http://testserver/k/memcached/default/cache/?tab=log",
    )
    assert poll.status_code == 200 and poll.content == b""
    assert (
        poll["HX-Redirect"]
        == "/accounts/login/?next=%2Fk%2Fmemcached%2Fdefault%2Fcache%2F%3Ftab%3Dlog"
    )
    plain = page.get("/k/memcached/default/cache/")  # a page load: Django's redirect, as before
    assert plain.status_code == 302 and "HX-Redirect" not in plain


def _bootstrap_admin(tmp_path: Path, password: str) -> None:
    """What each `make run` start does: bootstrap with the admin's password (no cluster here)."""
    secret = tmp_path / "admin_password"
    secret.write_text(password)
    call_command("bootstrap", "--admin-password-file", str(secret), stdout=StringIO())


def test_a_restart_with_the_same_admin_password_ends_no_session(tmp_path: Path,
                                                                settings) -> None:  # fmt: skip
    settings.KUBECONFIG_IN_CLUSTER, settings.KUBECONFIG = False, str(tmp_path / "none")
    _bootstrap_admin(tmp_path, PASSWORD)
    client = _logged_in(User.objects.get(username="admin"))
    _bootstrap_admin(tmp_path, PASSWORD)
    assert _signed_in(client)
    _bootstrap_admin(tmp_path, PASSWORD + " changed")  # the documented: the setting wins
    assert not _signed_in(client)
    assert User.objects.get(username="admin").check_password(PASSWORD + " changed")
