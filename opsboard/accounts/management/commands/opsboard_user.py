"""Create or update a user with a role: `manage.py opsboard_user alice --role operator`.

The password comes from --password-file (a mounted Secret) or the
OPSBOARD_USER_PASSWORD variable, never from the command line (it would sit in
the shell history and the process list).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from opsboard.accounts.roles import Role, role_assign


class Command(BaseCommand):
    help = "Create a user with a role (viewer, operator, admin), or change a user's role."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--role", required=True, choices=[r.value for r in Role])
        parser.add_argument("--password-file", type=Path, help="file holding the password")
        parser.add_argument("--email", default="")

    def handle(self, *args: Any, username: str, role: str, **options: Any) -> None:
        password = self._password(options["password_file"])
        model = get_user_model()
        user, created = model.objects.get_or_create(username=username)
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
        role_assign(user=user, role=Role(role))
        verb = "Created" if created else "Updated"
        self.stdout.write(f"{verb} user {username} with role {role}")

    def _password(self, path: Path | None) -> str:
        if path is None:
            return os.environ.get("OPSBOARD_USER_PASSWORD", "")
        try:
            return path.read_text().strip()
        except OSError as exc:
            raise CommandError(f"--password-file {path}: {exc.strerror}") from None
