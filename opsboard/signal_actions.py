"""Signal handlers that hand their work to a short thread of its own."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterable
from types import FrameType


def on_signals(signals: Iterable[int], action: Callable[[], object]) -> None:
    """Run `action` in a new thread when one of `signals` arrives.

    A handler runs in the main thread between two bytecodes, wherever that thread is. Run
    there, `Event.set()` takes the event's non-reentrant lock, which the main thread holds
    for a few bytecodes on either side of each `Event.wait`: landing there, the handler
    would wait on its own thread for good. A `print` landing inside another print of the
    main thread raises "reentrant call". From a thread of its own, the action just waits
    its turn."""

    def handler(_signum: int, _frame: FrameType | None) -> None:
        threading.Thread(target=action, name="signal action", daemon=True).start()

    for sig in signals:
        signal.signal(sig, handler)
