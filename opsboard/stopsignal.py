"""Stop signals that set a threading.Event without deadlocking the thread that waits on it."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterable
from types import FrameType


def stop_on(event: threading.Event, signals: Iterable[int]) -> None:
    """Set `event` when one of `signals` arrives.

    A handler runs in the main thread between two bytecodes, and the main thread is the one
    waiting on the event. `Event.set()` takes the event's (non-reentrant) lock, which the
    waiter holds for a few bytecodes on either side of each wait: a signal landing there
    would make the handler wait for its own thread for good. The set is handed to a short
    thread instead, which takes the lock as soon as the waiter lets go of it."""

    def handler(_signum: int, _frame: FrameType | None) -> None:
        threading.Thread(target=event.set, name="stop signal", daemon=True).start()

    for sig in signals:
        signal.signal(sig, handler)
