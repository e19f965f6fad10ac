"""A stop signal sets the event its process waits on (opsboard.signal_actions), even when it
lands while the waiting thread holds the event's lock; each case in a fresh interpreter,
whose signal handlers are its own."""

from __future__ import annotations

from tests.support.probe import probe

_SIGNAL = """
import faulthandler, json, signal, sys, threading
from opsboard.signal_actions import on_signals

faulthandler.dump_traceback_later(10, exit=True)  # a deadlock ends the probe, not the suite
stop = threading.Event()
on_signals((signal.SIGTERM, signal.SIGINT), stop.set)
held = sys.argv[1] == "held"
if held:
    stop._cond.acquire()  # where Event.wait holds it, just before and after each wait
signal.raise_signal(signal.SIGINT)  # its handler runs in this thread, before this returns
set_before_release = stop.is_set()
if held:
    stop._cond.release()
print(json.dumps({"stopped": stop.wait(5), "set_before_release": set_before_release}))
"""


def test_a_stop_signal_sets_the_event() -> None:
    assert probe(_SIGNAL, "free")["stopped"] is True


def test_a_stop_signal_landing_while_the_waiter_holds_the_events_lock_still_sets_it() -> None:
    # A handler calling stop.set() itself would wait here for its own thread's lock, and the
    # process would never stop (a watcher once outlived its SIGTERM by a minute).
    found = probe(_SIGNAL, "held")
    assert found == {"stopped": True, "set_before_release": False}
