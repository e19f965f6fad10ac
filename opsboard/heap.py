"""What a long-running process loaded at start, kept out of the cyclic GC's walk.

Django, the apps, the controllers and the API client live as long as the process. A full
(generation 2) collection walks every tracked object, so with them in the heap each one
paused its process, in the path of whatever change it was handling: 36 ms in the watcher
and 56 ms in a worker's main process in one run of the patch benchmark. Frozen, they stay
alive by their references as before; the collector only skips them. (The web server's
processes do the same in opsboard.wsgi.)
"""

from __future__ import annotations

import gc


def freeze_startup_objects() -> int:
    """Collect once (start-up's own cycles would never be freed once frozen), then freeze
    every object tracked now. Returns how many are frozen. Called where a process has set
    itself up: a prefork worker before it forks, so its pool processes share the pages."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
