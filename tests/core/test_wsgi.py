"""The WSGI entry point every web process loads (gunicorn, the image, the launcher)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_PROBE = """
import gc, json, sys
import opsboard.wsgi
print(json.dumps({"frozen": gc.get_freeze_count(),
                  "views": "opsboard.dashboard.views.crs" in sys.modules}))
"""


def test_loading_the_app_freezes_what_it_loaded_views_included() -> None:
    """Out of the cyclic GC's walk, so full collections stop pausing pages for 50-100 ms."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    result = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=60, check=True,
    )  # fmt: skip
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert loaded["views"], "the URLconf (and with it the views) was not imported first"
    assert loaded["frozen"] > 50_000, loaded
