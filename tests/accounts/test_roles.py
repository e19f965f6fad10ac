from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.core.management import CommandError, call_command

from opsboard.accounts.management.commands.opsboard_user import Command
from opsboard.accounts.roles import Role, has_role, role_assign, user_role

pytestmark = pytest.mark.django_db


def test_roles_are_ordered_viewer_operator_admin() -> None:
    user = User.objects.create_user("u")
    role_assign(user=user, role=Role.OPERATOR)
    user = User.objects.get(pk=user.pk)
    assert user_role(user) == Role.OPERATOR
    assert has_role(user, Role.VIEWER) and has_role(user, Role.OPERATOR)
    assert not has_role(user, Role.ADMIN)


def test_a_user_without_a_role_group_has_no_role() -> None:
    user = User.objects.create_user("nobody")
    assert user_role(user) is None
    assert not has_role(user, Role.VIEWER)
    assert not has_role(AnonymousUser(), Role.VIEWER)


def test_changing_role_replaces_the_previous_one_and_admin_gets_django_admin() -> None:
    user = User.objects.create_user("u")
    role_assign(user=user, role=Role.ADMIN)
    assert user.is_staff and user.is_superuser
    role_assign(user=user, role=Role.VIEWER)
    user = User.objects.get(pk=user.pk)
    assert list(user.groups.values_list("name", flat=True)) == ["viewer"]
    assert not user.is_staff and not user.is_superuser


def test_opsboard_user_creates_a_user_with_a_role_and_password_file(tmp_path) -> None:
    secret = tmp_path / "pw"
    secret.write_text("a sturdy passphrase 42\n")
    call_command("opsboard_user", "alice", "--role", "operator", "--password-file", str(secret))
    alice = User.objects.get(username="alice")
    assert alice.check_password("a sturdy passphrase 42")
    assert user_role(alice) == Role.OPERATOR


def test_opsboard_user_changes_the_role_of_an_existing_user(tmp_path) -> None:
    User.objects.create_user("bob", password="x")
    call_command("opsboard_user", "bob", "--role", "admin")
    bob = User.objects.get(username="bob")
    assert user_role(bob) == Role.ADMIN
    assert bob.check_password("x")  # no password given: the old one stays


def test_opsboard_user_refuses_a_weak_password(tmp_path) -> None:
    secret = tmp_path / "pw"
    secret.write_text("123")
    with pytest.raises(CommandError):
        call_command("opsboard_user", "carol", "--role", "viewer", "--password-file", str(secret))


def test_opsboard_user_refuses_an_unknown_role() -> None:
    with pytest.raises(CommandError):
        call_command("opsboard_user", "dave", "--role", "root")


def test_opsboard_user_says_when_the_user_it_made_has_no_password(
    tmp_path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPSBOARD_USER_PASSWORD", raising=False)
    call_command("opsboard_user", "vera", "--role", "viewer")
    out = capsys.readouterr().out
    assert out.startswith("Created user vera with role viewer\n")
    assert (
        "no password set: vera can log in only through single sign-on, which is not configured "
        "here; give one with --password-file or OPSBOARD_USER_PASSWORD"
    ) in out
    monkeypatch.setenv("OPSBOARD_USER_PASSWORD", "a sturdy passphrase 42")
    call_command("opsboard_user", "vera", "--role", "viewer")
    assert "no password set" not in capsys.readouterr().out


def test_opsboard_user_help_names_the_password_variable() -> None:
    parser = Command().create_parser("manage.py", "opsboard_user")
    assert "OPSBOARD_USER_PASSWORD" in " ".join(parser.format_help().split())
