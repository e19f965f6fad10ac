"""kubesim's own speed (issue 3): GET, write, watch delivery, LIST of 10,000, RSS.

Measured by bench/kubesim_api.py, which kubesim owns; we run it as it is run by hand
and turn its printed figures into rows with the issue's targets.
"""

from __future__ import annotations

import re

from bench import external
from bench.report import Outcome, Row, Target
from bench.runner import Bench

MODULE = "bench.kubesim_api"
# The first words of a printed line → (metric, target of its p50, in ms).
TIMED = {
    "GET one object": ("GET one object", Target(2)),
    "write": ("write (merge patch)", Target(5)),
    "watch delivery": ("watch delivery after the write", Target(5)),
    "LIST of": ("LIST", Target(500)),
}
TIMING = re.compile(r"^(?P<label>.+?)\s+p50\s+(?P<p50>[\d.]+) ms\s+p95\s+(?P<p95>[\d.]+) ms")
PLAIN = " (plain HTTP)"
RSS = re.compile(r"^RSS with (?P<count>\d+) CRs\s+(?P<mb>[\d.]+) MB")


def run(bench: Bench) -> Outcome:
    outcome = Outcome("kubesim", "kubesim API server, pinned to one core (bench/kubesim_api.py)")
    if not external.available(MODULE):
        outcome.error = f"{MODULE} does not exist yet"
        return outcome
    args = ["--objects", "1000", "--samples", "100"] if bench.quick else []
    printed = external.run_module(MODULE, args=args, timeout=600)
    for line in printed.splitlines():
        outcome.rows.extend(_rows(line.strip()))
    if not outcome.rows:  # a format we do not know: carry the lines as they are
        outcome.notes.extend(line for line in printed.splitlines() if line.strip())
    outcome.data = {"printed": printed}
    return outcome


def _rows(line: str) -> list[Row]:
    if match := RSS.match(line):
        count = int(match["count"])
        target = Target(250) if count >= 10000 else None
        return [Row(f"RSS with {count:,} CRs", float(match["mb"]), "MB", target=target)]
    match = TIMING.match(line)
    if not match or match["label"].startswith("..."):
        return []
    # kubesim_api measures over TLS, then over plain HTTP: those lines end "(plain HTTP)".
    plain = match["label"].endswith(PLAIN)
    label = match["label"].removesuffix(PLAIN)
    metric, target = next(
        ((m, t) for prefix, (m, t) in TIMED.items() if label.startswith(prefix)),
        (label, None),
    )
    if metric == "LIST":
        metric = label  # "LIST of 10003 objects": the target is for 10,000
        if int(re.sub(r"\D", "", metric) or 0) < 10000:
            target = None
    metric += PLAIN if plain else ""
    return [
        Row(f"{metric} p50", float(match["p50"]), "ms", target=target),
        Row(f"{metric} p95", float(match["p95"]), "ms"),
    ]
