"""Log line formats: `plain` for log collectors, `console` for a person at `make run`."""

from __future__ import annotations

import logging


class ConsoleFormatter(logging.Formatter):
    """INFO lines are the message alone (the launcher prefixes the process name); warnings
    and errors say their level and logger, and keep their traceback in full."""

    def __init__(self) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        if record.levelno <= logging.INFO and not record.exc_info:
            return record.getMessage()
        return super().format(record)
