"""Loaded (from PYTHONPATH) by every Python process of a `bench.writer_replay record` run:
in the watcher's, it appends each batch the mirror writer takes to OPSBOARD_RECORD_BATCHES.
A development hook for measurements only; nothing in opsboard imports it."""

from __future__ import annotations

import os
import sys
from typing import Any

if os.environ.get("OPSBOARD_RECORD_BATCHES") and "runwatcher" in sys.argv:
    import django

    _setup = django.setup

    def _recording_setup(*args: Any, **kwargs: Any) -> None:
        _setup(*args, **kwargs)
        import pickle

        from opsboard.engine import watcher

        apply, path = watcher.Watcher._apply, os.environ["OPSBOARD_RECORD_BATCHES"]

        def _recorded(self: watcher.Watcher, batch: list[Any]) -> None:
            with open(path, "ab") as out:  # appended as taken: a killed watcher loses none
                pickle.dump(batch, out)
            apply(self, batch)

        watcher.Watcher._apply = _recorded  # type: ignore[method-assign]

    django.setup = _recording_setup
