"""Server-side SVG charts of reconcile outcomes and durations: plain shapes for a template.

Each chart is a list of hourly columns; the template draws stacked bars for the
outcomes and a line for the mean duration, so the page needs no JavaScript library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Q

from opsboard.audit.selectors import hours, run_buckets
from opsboard.engine.models import ReconcileRun

WIDTH, HEIGHT, PAD = 720, 160, 28
OUTCOMES = list(ReconcileRun.Outcome.values)


@dataclass
class Bar:
    x: float
    width: float
    segments: list[tuple[str, float, float, int]]  # (outcome, y, height, count)
    label: str


@dataclass
class Chart:
    controller: str
    bars: list[Bar] = field(default_factory=list)
    max_count: int = 0
    max_ms: float = 0.0
    duration_points: str = ""  # SVG polyline points of the mean duration
    duration_dots: list[tuple[float, float, str]] = field(default_factory=list)  # (x, y, title)
    ticks: list[tuple[float, str]] = field(default_factory=list)  # (x, "14:00")
    totals: dict[str, int] = field(default_factory=dict)


def run_charts(*, since: datetime, until: datetime, scope: Q) -> list[Chart]:
    slots = hours(since=since, until=until)
    slot_width = (WIDTH - 2 * PAD) / max(1, len(slots))
    charts = []
    for controller, rows in sorted(run_buckets(since=since, scope=scope).items()):
        by_hour = {row["hour"]: row for row in rows}
        chart = Chart(controller=controller)
        chart.max_count = max(int(row["total"]) for row in rows)
        chart.max_ms = max(float(row["max_ms"] or 0) for row in rows) or 1.0
        chart.totals = {o: sum(int(row[o]) for row in rows) for o in OUTCOMES}
        points = []
        for i, hour in enumerate(slots):
            x = PAD + i * slot_width
            row = by_hour.get(hour)
            if i % max(1, len(slots) // 6) == 0:
                chart.ticks.append((x, hour.strftime("%H:%M")))
            if row is None:
                continue
            chart.bars.append(_bar(row, x, slot_width, chart.max_count, hour))
            mean = float(row["mean_ms"] or 0)
            y = HEIGHT - PAD - (HEIGHT - 2 * PAD) * mean / chart.max_ms
            points.append(f"{x + slot_width / 2:.1f},{y:.1f}")
            chart.duration_dots.append((x + slot_width / 2, y, f"mean {mean:.1f} ms"))
        chart.duration_points = " ".join(points)
        charts.append(chart)
    return charts


def _bar(row: dict[str, Any], x: float, width: float, max_count: int, hour: datetime) -> Bar:
    scale = (HEIGHT - 2 * PAD) / max(1, max_count)
    y = float(HEIGHT - PAD)
    segments = []
    for outcome in OUTCOMES:
        count = int(row[outcome])
        if count:
            y -= count * scale
            segments.append((outcome, y, count * scale, count))
    label = f"{hour:%H:00}: {row['total']} runs, mean {float(row['mean_ms'] or 0):.1f} ms"
    return Bar(x=x + 1, width=max(1.0, width - 2), segments=segments, label=label)
