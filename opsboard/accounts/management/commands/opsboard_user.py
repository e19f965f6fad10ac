"""Create or update a user and their role, globally or in some namespaces; end their sessions.

    manage.py opsboard_user alice --role operator                      # operator everywhere
    manage.py opsboard_user alice --role operator --namespace team-a   # only in team-a
    manage.py opsboard_user alice --role none --namespace team-a       # take that away
    manage.py opsboard_user --revoke alice                             # end her sessions now

The password comes from --password-file (a mounted Secret) or the
OPSBOARD_USER_PASSWORD variable, never from the command line (it would sit in
the shell history and the process list).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from opsboard.accounts.role_changes import role_changes_announced
from opsboard.accounts.roles import Role, grant_assign, role_assign
from opsboard.accounts.sessions import sessions_end, sessions_revoked

NONE = "none"
BY = "manage.py opsboard_user"


class Command(BaseCommand):
    help = "Create a user with a role (viewer, operator, admin), globally or per namespace."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--role", choices=[*(r.value for r in Role), NONE])
        parser.add_argument(
            "--namespace", action="append", default=[], metavar="NS",
            help="give the role in this namespace only (repeatable); without it, everywhere",
        )  # fmt: skip
        parser.add_argument(
            "--password-file", type=Path,
            help="file holding the password (else the OPSBOARD_USER_PASSWORD variable; "
            "with neither, a new user can log in only through single sign-on)",
        )  # fmt: skip
        parser.add_argument("--email", default="")
        parser.add_argument(
            "--revoke", action="store_true", help="end every session the user holds, now"
        )

    def handle(self, *args: Any, username: str, role: str | None, **options: Any) -> None:
        if options["revoke"]:
            self._revoke(username)
            if role is None:
                return
        if role is None:
            raise CommandError("--role is required (viewer, operator, admin, or none)")
        password = self._password(options["password_file"])
        user, created = User.objects.get_or_create(username=username)
        if options["email"]:
            user.email = options["email"]
        if password:
            try:
                validate_password(password, user)
            except ValidationError as exc:
                raise CommandError("; ".join(exc.messages)) from None
            user.set_password(password)
        elif created:
            user.set_unusable_password()
        user.save()
        chosen = None if role == NONE else Role(role)
        namespaces: list[str] = options["namespace"]
        with role_changes_announced(target=user, actor=None, by=BY):
            for namespace in namespaces:
                grant_assign(user=user, namespace=namespace, role=chosen)
            if not namespaces:
                role_assign(user=user, role=chosen)
        verb = "Created" if created else "Updated"
        where = f" in {', '.join(namespaces)}" if namespaces else ""
        self.stdout.write(f"{verb} user {username} with role {role}{where}")
        if not user.has_usable_password():  # else it looks done, and the login page refuses
            self.stdout.write(self._no_password(username))

    def _revoke(self, username: str) -> None:
        user = User.objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user named {username!r}")
        ended = sessions_end(user_id=user.pk)
        sessions_revoked.send(sender=User, target=user, by=BY, ended=ended)
        self.stdout.write(f"Ended {ended} session(s) of {username}")

    @staticmethod
    def _no_password(username: str) -> str:
        sso = "" if settings.OPSBOARD_OIDC_ISSUER else ", which is not configured here"
        return (
            f"Note: no password set: {username} can log in only through single sign-on{sso}; "
            "give one with --password-file or OPSBOARD_USER_PASSWORD"
        )

    def _password(self, path: Path | None) -> str:
        if path is None:
            return os.environ.get("OPSBOARD_USER_PASSWORD", "")
        try:
            return path.read_text().strip()
        except OSError as exc:
            raise CommandError(f"--password-file {path}: {exc.strerror}") from None
