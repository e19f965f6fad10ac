"""Role changes are audited: who changed whose role, where, from what to what; by
`manage.py opsboard_user` and on the user's page in Django admin. An unchanged role writes
no entry. Sessions ended by hand (`--revoke`) are audited too."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import Client

from opsboard.accounts.roles import Role, grant_assign
from opsboard.audit.models import AuditEntry
from tests.accounts.users import PASSWORD

pytestmark = pytest.mark.django_db
CLI = "manage.py opsboard_user"


def _roles() -> list[tuple[str, str, str, str | None, str | None, str]]:
    return [
        (e.username, e.name, e.namespace, e.before["role"], e.after["role"], e.message)
        for e in AuditEntry.objects.filter(action=AuditEntry.Action.ROLE).order_by("at", "pk")
    ]


def test_grants_and_revokes_by_the_command_are_audited_once_each() -> None:
    call_command("opsboard_user", "tina", "--role", "operator", "--namespace", "team-a")
    call_command("opsboard_user", "tina", "--role", "operator", "--namespace", "team-a")
    call_command("opsboard_user", "tina", "--role", "none", "--namespace", "team-a")
    call_command("opsboard_user", "tina", "--role", "viewer")
    assert _roles() == [
        (CLI, "tina", "team-a", None, "operator", f"Granted operator in team-a to tina (through {CLI})"),
        (CLI, "tina", "team-a", "operator", None, f"Took operator in team-a from tina (through {CLI})"),
        (CLI, "tina", "", None, "viewer", f"Granted viewer everywhere to tina (through {CLI})"),
    ]  # fmt: skip
    assert AuditEntry.objects.get(namespace="").result == "applied"


def _change_form(user: User, **fields: Any) -> dict[str, Any]:
    """The admin's user change form as posted, with one namespace grant row."""
    data = {
        "username": user.username, "first_name": "", "last_name": "", "email": "",
        "is_active": "on", "last_login_0": "", "last_login_1": "",
        "date_joined_0": user.date_joined.strftime("%Y-%m-%d"),
        "date_joined_1": user.date_joined.strftime("%H:%M:%S"),
        "namespace_grants-TOTAL_FORMS": "1", "namespace_grants-INITIAL_FORMS": "0",
        "namespace_grants-MIN_NUM_FORMS": "0", "namespace_grants-MAX_NUM_FORMS": "1000",
        "namespace_grants-0-id": "", "namespace_grants-0-user": str(user.pk),
        "namespace_grants-0-namespace": "", "namespace_grants-0-role": "",
    }  # fmt: skip
    return data | fields


def test_a_grant_and_a_global_role_set_on_the_admin_user_page_are_audited(
    admin_client_: Client, admin_user: User
) -> None:
    tina = User.objects.create_user("tina")
    grant_assign(user=tina, namespace="team-b", role=Role.VIEWER)  # kept as it is
    operators = Group.objects.get_or_create(name="operator")[0]
    data = _change_form(tina, groups=[str(operators.pk)], **{
        "namespace_grants-0-namespace": "team-a", "namespace_grants-0-role": "admin",
    })  # fmt: skip
    response = admin_client_.post(f"/admin/auth/user/{tina.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    by = admin_user.username
    assert sorted(_roles()) == [
        (by, "tina", "", None, "operator", "Granted operator everywhere to tina (through Django admin)"),
        (by, "tina", "team-a", None, "admin", "Granted admin in team-a to tina (through Django admin)"),
    ]  # fmt: skip
    assert {e.user for e in AuditEntry.objects.all()} == {admin_user}


def test_the_audit_page_shows_whose_role_changed_where(admin_client_: Client) -> None:
    call_command("opsboard_user", "tina", "--role", "operator", "--namespace", "team-a")
    page = admin_client_.get("/audit/").content.decode()
    assert "role change" in page and "user tina in team-a" in page


def test_sessions_ended_by_hand_are_audited_and_shown(admin_client_: Client, viewer: User) -> None:
    for _ in range(2):
        login = {"username": viewer.username, "password": PASSWORD}
        assert Client().post("/accounts/login/", login).status_code == 302
    call_command("opsboard_user", "--revoke", viewer.username)
    [entry] = AuditEntry.objects.filter(action=AuditEntry.Action.REVOKE)
    assert (entry.username, entry.kind, entry.name, entry.result) == (
        CLI,
        "User",
        "vera",
        "applied",
    )
    assert entry.message == f"Ended 2 session(s) of vera (through {CLI})"

    html = admin_client_.get("/audit/").content.decode()
    assert "sessions ended" in html and "user vera" in html
