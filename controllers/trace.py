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
import threading
import time
from typing import TextIO

PATH = os.environ.get("OPSBOARD_TRACE", "")
ON = bool(PATH)

_lock = threading.Lock()  # a process's threads (the watcher's streams and writer) share its file
_file: TextIO | None = None


def mark(what: str, detail: str = "") -> None:
    global _file
    if not ON:
        return
    line = f"{time.time():.6f} {os.getpid()} {what} {detail}\n"
    with _lock:
        if _file is None:  # open for the process's life: a mark must cost little
            _file = open(PATH, "a", buffering=1, encoding="utf-8")  # noqa: SIM115
        _file.write(line)


def _forked() -> None:
    """A pool process opens its own file, under a lock no thread of its parent holds."""
    global _lock, _file
    _lock, _file = threading.Lock(), None


if ON:
    os.register_at_fork(after_in_child=_forked)
