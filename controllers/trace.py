"""Opt-in timestamps of a change's way through opsboard's processes, for the patch
benchmark's account of where the time went (`python -m bench patch --trace`, read by
bench/trace.py). With OPSBOARD_TRACE naming a file, each `mark` appends a line to it,
"<unix time> <pid> <what> <detail>"; without it, a call site tests `ON` and nothing more.

The marks are few and fixed: a primary's change read from its watch, its key queued,
popped by a pool process, its run begun (the lock taken); each API request sent and
answered. Every process appends to the one file; a line is written whole (line buffered,
opened for append), so lines of different processes never mix.
"""

from __future__ import annotations

import os
import time
from typing import TextIO

PATH = os.environ.get("OPSBOARD_TRACE", "")
ON = bool(PATH)

_file: TextIO | None = None
_pid = 0


def mark(what: str, detail: str = "") -> None:
    global _file, _pid
    if not ON:
        return
    if _file is None or _pid != os.getpid():  # a forked pool process opens its own
        _file, _pid = open(PATH, "a", buffering=1, encoding="utf-8"), os.getpid()  # noqa: SIM115
    _file.write(f"{time.time():.6f} {_pid} {what} {detail}\n")
