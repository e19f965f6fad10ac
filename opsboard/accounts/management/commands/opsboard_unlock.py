"""Lift a login lockout before it expires, and leave an audit entry saying so.

    manage.py opsboard_unlock --username tina          # her failures, from every address
    manage.py opsboard_unlock --address 10.0.0.7       # that address's, for every name

axes' own axes_reset_username and axes_reset_ip do the same without the audit entry.
"""

from __future__ import annotations

from typing import Any

from axes.utils import reset
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from opsboard.accounts.throttle import lockout_lifted, lockout_subject

BY = "manage.py opsboard_unlock"


class Command(BaseCommand):
    help = "Lift the login lockout of a username or of a client address, audited."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default="", help="clear this name's failures")
        parser.add_argument("--address", default="", help="clear this address's failures")

    def handle(self, *args: Any, username: str, address: str, **options: Any) -> None:
        if not username and not address:
            raise CommandError("name what to unlock: --username NAME and/or --address ADDRESS")
        cleared = 0
        if username:
            cleared += reset(username=username)
        if address:
            cleared += reset(ip=address)
        if username and not User.objects.filter(username=username).exists():
            self.stderr.write(f"Note: no account is named {username!r}")
        lockout_lifted.send(sender=User, username=username, address=address, cleared=cleared, by=BY)
        whose = lockout_subject(username, address)
        self.stdout.write(f"Cleared {cleared} failure record(s) of {whose}")
