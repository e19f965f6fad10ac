"""Log line formats: `plain` for log collectors, `console` for a person at `make run`."""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied


class ConsoleFormatter(logging.Formatter):
    """INFO lines are the message alone (the launcher prefixes the process name); warnings
    and errors say their level and logger, and keep their traceback in full."""

    def __init__(self) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        if record.levelno <= logging.INFO and not record.exc_info:
            return record.getMessage()
        return super().format(record)


class RefusalWithoutTraceback(logging.Filter):
    """A request refused for want of a role is an answer, not a fault: Django logs it with
    the traceback of the PermissionDenied that answered it. Keep the line, with the reason
    instead of the traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, PermissionDenied):
            record.msg, record.args = f"{record.getMessage()}: {error}", None
            record.exc_info, record.exc_text = None, None
        return True
