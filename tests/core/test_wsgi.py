"""The WSGI entry point every web process loads (gunicorn, the image, the launcher)."""

from __future__ import annotations

from tests.support.probe import probe

_PROBE = """
import gc, json, sys
import opsboard.wsgi
print(json.dumps({"frozen": gc.get_freeze_count(),
                  "views": "opsboard.dashboard.views.crs" in sys.modules}))
"""


def test_loading_the_app_freezes_what_it_loaded_views_included() -> None:
    """Out of the cyclic GC's walk, so full collections stop pausing pages for 50-100 ms."""
    loaded = probe(_PROBE, env={"DJANGO_SETTINGS_MODULE": "tests.settings"})
    assert loaded["views"], "the URLconf (and with it the views) was not imported first"
    assert loaded["frozen"] > 50_000, loaded
