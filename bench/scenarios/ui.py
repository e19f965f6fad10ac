"""Scenario 5, UI: server time of the list page at 1,000 and 10,000 CRs and of a detail
page whose owner tree holds 100 pods, through HTTP on the running gunicorn, logged in.

Times are client round trips on the loopback (server time plus well under a
millisecond of transport). The first 1,000 CRs (or --crs) are real and reconciled; to reach
10,000 within the time budget the workers are stopped and the other CRs (size 0)
are only created and mirrored by the watcher, which is all a list page reads.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

import requests

from bench.fleet import create_many
from bench.report import Outcome, Row, Target
from bench.runner import READY_TIMEOUT, Bench, check_pod_room, expect, start_operator
from bench.runs import reconciles_total
from bench.stack import RssSampler, Stack, StackError
from bench.stats import summary_ms
from bench.web import login

BIG = "big"
# Issue 16's memory goal at 10,000 CRs: "each worker process" is its main and every pool
# process (the biggest is given), "web" gunicorn's master and each of its workers.
RSS_TARGETS_MB = {
    "watcher": 150.0,
    "web (main)": 120.0,
    "web (one pool process)": 120.0,
    "worker (main)": 120.0,
    "worker (one pool process)": 120.0,
}
LIST_PATH = "/k/memcached/"


def run(bench: Bench) -> Outcome:
    pods = bench.size(full=100, quick=10)
    # --crs: the reconciled fleet, for a cluster with no room for 1,000 pods (the rig's
    # three nodes take 330); the 10,000 CRs beyond it have no pods.
    small, large = bench.crs or bench.size(full=1000, quick=20), bench.size(full=10000, quick=100)
    requests_per_page = bench.size(full=60, quick=5)
    outcome = Outcome("ui", "UI server time (HTTP on gunicorn, logged in)")
    figures: dict[str, Any] = {}
    kept = bench.reuse("opsboard")  # the fleet the cold-start and cost scenarios left
    stack, fleet = kept or (bench.stack("ui"), None)
    with stack:
        if stack.external is not None:
            fleet_crs = 0 if kept else small + 1  # + 1: the warm-up CR
            check_pod_room(
                stack.api,
                pods + fleet_crs,
                f"{pods} for the detail page's CR, one for each of the {fleet_crs} CRs of its "
                "fleet (give a smaller --crs; after the cold start, ui reuses the cold start's "
                "fleet: run it on its own)",
            )
        if fleet is None:
            fleet = start_operator(stack, "opsboard", workers=2, pods=pods + small + 2)
            names = [f"mc-{i:05d}" for i in range(small)]
            create_many(stack.api, stack.namespace, names, size=1)
        if not stack.web_url:  # the idle scenario may have started it
            stack.start_web()
        # Created after the fleet: its pods wait behind the fleet's (a real cluster's pace).
        stack.api.create_memcached(stack.namespace, BIG, size=pods)
        expect(fleet, lambda: fleet.ready(BIG, 1), READY_TIMEOUT, f"the CR with {pods} pods ready")
        expect(fleet, lambda: len(fleet.ready_ok) >= small + 2, READY_TIMEOUT,
               f"all {small + 2:,} CRs ready before the pages")  # fmt: skip
        _wait_mirrored(stack, small + 2)
        session = login(stack)

        detail = _time_page(
            session, stack.web_url + f"/k/memcached/{stack.namespace}/{BIG}/", requests_per_page
        )
        at_small = _time_page(session, stack.web_url + LIST_PATH, requests_per_page)
        fragment = _time_page(session, stack.web_url + LIST_PATH, requests_per_page, htmx=True)
        figures["rss_mb_at_small"] = dict(stack.rss.peak_mb)

        stack.retire("worker")
        more = [f"bulk-{i:05d}" for i in range(large - small)]
        create_many(stack.api, stack.namespace, more, size=0)
        _wait_mirrored(stack, large + 2)
        at_large = _time_page(session, stack.web_url + LIST_PATH, requests_per_page)
        fragment_large = _time_page(session, stack.web_url + LIST_PATH, requests_per_page,
                                    htmx=True)  # fmt: skip
        # The watcher's peak before the resync apart: the window's churn (its CRs' status
        # writes, watched back) grows with the machine's pace, the mirror's size does not.
        figures["watcher_rss_mb_before_resync"] = stack.rss.peak_mb.get("watcher")
        figures["resync_at_large"] = _resync_everything(stack, bench.size(full=60, quick=10))
        figures["rss_mb_at_large"] = dict(stack.rss.peak_mb) | figures["resync_at_large"].pop(
            "peak_rss_mb"
        )
    figures["fleet_from_coldstart"] = kept is not None

    summaries = {
        f"detail ({pods} pods)": summary_ms(detail),
        f"list at {small:,}": summary_ms(at_small),
        f"list rows fragment at {small:,}": summary_ms(fragment),
        f"list at {large:,}": summary_ms(at_large),
        f"list rows fragment at {large:,}": summary_ms(fragment_large),
    }
    for label, summary in summaries.items():
        judged = not bench.quick and label.startswith(("list at", "detail"))
        judged = judged and not (bench.crs and label == f"list at {small:,}")  # at 1,000 only
        for p in ("p50_ms", "p95_ms"):
            target = Target(100) if judged and p == "p95_ms" else None
            outcome.rows.append(Row(f"{label} {p[:3]}", summary.get(p), "ms", target=target))
    for key, count in (("rss_mb_at_small", small), ("rss_mb_at_large", large)):
        for role, limit in RSS_TARGETS_MB.items():
            if role in figures[key]:
                target = Target(limit) if count == large and not bench.quick else None
                outcome.rows.append(Row(f"peak RSS {role} at {count:,} CRs",
                                        round(figures[key][role], 1), "MB", target=target))  # fmt: skip
    if (before := figures["watcher_rss_mb_before_resync"]) is not None:
        outcome.rows.append(Row(f"peak RSS watcher at {large:,} CRs, before the resync",
                                round(before, 1), "MB"))  # fmt: skip
    outcome.samples = {
        f"list at {small:,}": at_small,
        f"list at {large:,}": at_large,
        f"detail ({pods} pods)": detail,
    }
    outcome.notes.append(
        f"{requests_per_page} sequential requests per page after 3 warm-up requests; gunicorn "
        f"2 workers x 4 threads; the CRs beyond {small:,} have size 0 and were created with the "
        "workers stopped (mirrored by the watcher, unreconciled)"
    )
    resync = figures["resync_at_large"]
    outcome.notes.append(
        f"worker RSS at {large:,}: the 2 workers started again, a resync of every CR queued "
        f"at once (runner.resync_all), peaks of the worker's main and biggest pool process "
        f"sampled every 100 ms for {resync['window_s']} s, in which {resync['reconciles']:,} "
        f"reconciles ran; the watcher's and web's peaks at {large:,} include that window"
    )
    if bench.quick:
        outcome.notes.append(
            "quick run: the 100 ms and RSS targets (10,000 CRs, 100 pods) are not judged"
        )
    outcome.data = {"pods": pods, "crs": [small, large], "pages": summaries} | figures
    return outcome


def _resync_everything(stack: Stack, window: int) -> dict[str, Any]:
    """The workers again, on the whole fleet: every CR queued for a reconcile at once, the
    workers' peak RSS sampled for a bounded `window` of that work."""
    worker = stack.start_worker(2)
    sampler = RssSampler([worker]).start()
    runs_before = reconciles_total(stack.db)
    started = time.monotonic()
    stack.manage("shell", "-c", "from opsboard.engine.runner import resync_all; "
                 "resync_all(jitter=0)")  # fmt: skip
    time.sleep(max(0.0, window - (time.monotonic() - started)))
    sampler.stop()
    stack.retire("worker")
    return {
        "window_s": round(time.monotonic() - started),
        "reconciles": reconciles_total(stack.db) - runs_before,
        "peak_rss_mb": dict(sampler.peak_mb),
    }


def _wait_mirrored(stack: Stack, count: int, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while _mirrored(stack) < count:
        if time.monotonic() > deadline:
            raise StackError(
                f"the mirror holds {_mirrored(stack)} of {count} CRs after {timeout} s"
            )
        time.sleep(0.5)


def _mirrored(stack: Stack) -> int:
    with sqlite3.connect(f"file:{stack.db}?mode=ro", uri=True, timeout=20) as conn:
        (count,) = conn.execute(
            "SELECT COUNT(*) FROM mirror_kubeobject WHERE kind = 'Memcached'"
        ).fetchone()
    return int(count)


def _time_page(
    session: requests.Session, url: str, count: int, *, htmx: bool = False
) -> list[float]:
    headers = {"HX-Request": "true"} if htmx else {}
    samples = []
    for i in range(count + 3):
        start = time.perf_counter()
        response = session.get(url, headers=headers, timeout=30, allow_redirects=False)
        took = time.perf_counter() - start
        if response.status_code != 200:
            raise StackError(f"GET {url}: HTTP {response.status_code}")
        if i >= 3:
            samples.append(took)
    return samples
