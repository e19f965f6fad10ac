"""A live fragment's poll answered with nothing to swap when nothing it shows has changed.

The overview polls every 5 s, a CR list's rows (and count) every 2 s. At 1,000 CRs an
overview poll cost the web about 50 ms of CPU under gunicorn, nearly half of what the whole
product used at rest with a tab open on it; the counts by health, the attention list's
count and the template are about 40 % of it (28 against 16 ms in the test client; the rest
is the request's way in and the reads below). So a poll carries the token of what its
fragment shows (`?shown=`), and when the same inputs give the same token the answer is a
204, which htmx leaves unswapped. The token is made of the inputs the page is rendered
from and the ages as the page prints them ("3m"): a change anywhere, or an age turning,
renders it again; and at least once a RENDER_EVERY, for whatever it might not see. A
list's page of 50 rows is mostly template (a poll 37 ms in the test client, 15 ms as a
204), so its token is made from the rows themselves, read as the page reads them. A CR's
page polls its live sections every 2 s; their inputs are many (the CR, its owner tree,
pods, runs, Events, change history, the diagnosis), so their token is made from them as
rendered: no input can be missed, and a poll that changes nothing leaves the page as it
is, a person's text selection or opened list included (the render is not saved).
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterable
from typing import Any

from django.core.paginator import Page
from django.db.models import Q

from opsboard.dashboard.engine_health import EngineHealth
from opsboard.dashboard.http import DashboardRequest
from opsboard.dashboard.templatetags.opsboard import short_age
from opsboard.engine.models import ReconcileRun

RENDER_EVERY = 60  # seconds
STOP_POLLING = 286  # htmx swaps the answer and polls no more (a CR deleted meanwhile)
# A form's CSRF field: its value is masked anew for every response (against BREACH), and
# any of them is accepted, so it says nothing about what a fragment shows.
_CSRF_VALUE = re.compile(r'(name="csrfmiddlewaretoken" value=")[^"]*')


def nothing_to_swap(request: DashboardRequest, shown: str) -> bool:
    """Whether `request` is a fragment's poll (htmx) that sends back `shown`, the token of
    what it would show now: it is answered 204, which htmx leaves unswapped."""
    return bool(request.htmx) and request.GET.get("shown") == shown


def token(*parts: object, now: float | None = None) -> str:
    """A short digest of `parts` (their repr) and of the current RENDER_EVERY window."""
    window = int((time.time() if now is None else now) // RENDER_EVERY)
    return hashlib.blake2b(repr((window, parts)).encode(), digest_size=8).hexdigest()


def overview_token(*, engine: EngineHealth, runs: Iterable[ReconcileRun], scope: Q) -> str:
    """What the overview shows, as a token. The mirror's counts and attention list follow
    from its last event (saved at most SAVE_EVERY after a change). Not from the resume
    points: a watch's bookmarks move them every few seconds with nothing changed (their
    resourceVersion is the server's, which the watcher's own Lease renewals advance), nor
    from the heartbeat, which moves with every renewal. The run tables follow from their
    rows, including what folding a run into one changes; the engine card from itself."""
    mirror = engine.mirror
    return token(
        str(scope),
        (
            mirror.watcher_up,
            mirror.leader,
            mirror.standbys,
            mirror.lease_error,
            mirror.last_event_at,
        ),
        short_age(mirror.last_event_at),
        engine.queue,
        (engine.last_run_at, short_age(engine.last_run_at)),
        (engine.runs_last_hour, engine.errors_last_hour),
        [
            (
                run.id,
                run.folded_count,
                run.last_folded_at,
                run.duration_ms,
                short_age(run.started_at),
            )
            for run in runs
        ],
    )


def list_token(page: Page[Any]) -> str:
    """What a page of a CR list shows, as a token: how many CRs and pages; each row's
    (selectors.CrRow) kind and CR, the view its columns, ready, desired and image are read
    from, its last outcome, its age as printed and whether it is being deleted. (The poll's
    URL keeps the filters.)"""
    return token(
        (page.number, page.paginator.count, page.paginator.num_pages),
        [
            (
                row.info.name,
                (row.cr.uid, row.cr.health, row.cr.observed_generation),
                row.view,  # with the name, namespace, labels and generation
                row.last_outcome,
                short_age(row.cr.created_at),
                row.cr.deleted_at is not None,
            )
            for row in page
        ],
    )


def rendered_token(html: str) -> str:
    """A short digest of a fragment as rendered, its CSRF fields' values apart."""
    return hashlib.blake2b(_CSRF_VALUE.sub(r"\1", html).encode(), digest_size=8).hexdigest()
