"""The test process's settings: the product's, with its local state (the generated secret
key, the metrics files) in a temporary directory instead of the working tree's .opsboard/,
which is `make run`'s. Engine processes started by tests get state dirs of their own."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

if "OPSBOARD_STATE_DIR" not in os.environ:
    _state = tempfile.mkdtemp(prefix="opsboard-test-state-")
    os.environ["OPSBOARD_STATE_DIR"] = _state
    atexit.register(shutil.rmtree, _state, True)

from opsboard.settings import *  # noqa: F403
