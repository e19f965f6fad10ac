#!/usr/bin/env python
"""Django's command-line utility for opsboard."""

from __future__ import annotations

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "opsboard.settings")
    from django.core.exceptions import ImproperlyConfigured

    try:
        from django.core.management import execute_from_command_line

        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # One clear line naming the variable, not a traceback.
        sys.exit(f"opsboard: configuration error: {exc}")


if __name__ == "__main__":
    main()
