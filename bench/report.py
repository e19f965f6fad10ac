"""What a scenario reports, and how: a table on stdout, JSON and PNG plots on disk.

Targets are compared and the verdict printed ("missed by 12 ms (24%)"); nothing
is ever asserted.
"""

from __future__ import annotations

import json
import os
import platform
import textwrap
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter


@dataclass(frozen=True)
class Target:
    limit: float
    op: str = "<="  # "<=": at most the limit; ">=": at least

    def __str__(self) -> str:
        return f"{'≤' if self.op == '<=' else '≥'} {self.limit:g}"

    def verdict(self, value: float | None, unit: str = "") -> str:
        if value is None:
            return "not measured"
        met = value <= self.limit if self.op == "<=" else value >= self.limit
        if met:
            return "met"
        gap = abs(value - self.limit)
        share = f" ({gap / self.limit:.0%})" if self.limit else ""
        unit = f" {unit}" if unit and unit not in {"n", "x"} else ""
        return f"MISSED by {gap:.3g}{unit}{share}"


@dataclass
class Row:
    metric: str
    value: float | None  # opsboard's figure; None: not measured
    unit: str
    peer: float | None = None  # the kopf peer's figure, where the scenario runs both
    target: Target | None = None
    # How many times better opsboard is: peer / value for costs and latencies.
    higher_is_better: bool = False
    paired: bool = True  # False: the two columns hold two figures of one thing (the floor's)

    @property
    def ratio(self) -> float | None:
        if (
            not self.paired
            or self.value is None
            or self.peer is None
            or not self.value
            or not self.peer
        ):
            return None
        return self.value / self.peer if self.higher_is_better else self.peer / self.value

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["target"] = str(self.target) if self.target else None
        data["verdict"] = self.target.verdict(self.value, self.unit) if self.target else None
        data["ratio_vs_peer"] = round(self.ratio, 2) if self.ratio else None
        return data


@dataclass
class Outcome:
    name: str
    title: str
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)  # everything measured, for the JSON
    # Latency samples in seconds per series label, plotted as distributions.
    samples: dict[str, list[float]] = field(default_factory=dict)
    # Bar charts: label -> value, with the unit in the chart's title.
    bars: dict[str, dict[str, float]] = field(default_factory=dict)
    error: str | None = None  # why the scenario could not run (a missing piece)
    seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "seconds": round(self.seconds, 1),
            "error": self.error,
            "notes": self.notes,
            "rows": [row.as_json() for row in self.rows],
            "data": self.data,
            # Each sample, in order: which patches were slow, not only how many.
            "samples_ms": {k: [round(s * 1000, 2) for s in v] for k, v in self.samples.items()},
        }


def machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
    }


# -- the table ------------------------------------------------------------------------------
def _fmt(value: float | None) -> str:
    if value is None:
        return "—"
    if value == int(value) and abs(value) >= 10:
        return f"{int(value):,}"
    return f"{value:,.3g}" if abs(value) < 100 else f"{value:,.0f}"


def table(outcomes: list[Outcome], *, quick: bool) -> str:
    info = machine()
    lines = [
        f"opsboard benchmarks — {info['cpus']} CPUs, Python {info['python']}, {info['platform']}"
        + (" — QUICK (small sizes, not the published figures)" if quick else ""),
    ]
    header = ("Metric", "opsboard", "kopf", "kopf/opsb.", "Target", "Verdict")
    body: list[tuple[str, ...]] = []
    for outcome in outcomes:
        load = outcome.data.get("load_average") or {}
        said = f" (1-min load {load['before']:.1f} → {load['after']:.1f})" if load else ""
        body.append((f"[{outcome.name}] {outcome.title}{said}", "", "", "", "", ""))
        if outcome.error:
            body.append((f"  not measured: {outcome.error}", "", "", "", "", ""))
        for row in outcome.rows:
            ratio = f"{row.ratio:.1f}x" if row.ratio else ""
            body.append(
                (
                    f"  {row.metric} ({row.unit})",
                    _fmt(row.value),
                    _fmt(row.peer),
                    ratio,
                    str(row.target) if row.target else "",
                    row.target.verdict(row.value, row.unit) if row.target else "",
                )
            )
    rows = [header, *[cells for cells in body if cells[1:] != ("",) * 5]]
    widths = [max(len(cells[i]) for cells in rows) for i in range(len(header))]

    def line(cells: tuple[str, ...]) -> str:
        if cells[1:] == ("",) * 5:
            return cells[0]
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    lines += [line(header), "-" * (sum(widths) + 2 * (len(widths) - 1))]
    lines += [line(cells) for cells in body]
    for outcome in outcomes:
        for note in outcome.notes:
            lines.append(f"note [{outcome.name}]: {note}")
    return "\n".join(lines)


# -- files ----------------------------------------------------------------------------------
def write_json(outcomes: list[Outcome], out: Path, *, quick: bool) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.json"
    document = {
        "machine": machine(),
        "quick": quick,
        "scenarios": {o.name: o.as_json() for o in outcomes},
    }
    path.write_text(json.dumps(document, indent=2, sort_keys=False) + "\n")
    return path


def write_plots(outcomes: list[Outcome], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for outcome in outcomes:
        if outcome.samples:
            written.append(_plot_distributions(outcome, out / f"{outcome.name}.png"))
        for chart, values in outcome.bars.items():
            written.append(_plot_bars(outcome, chart, values, out))
    return written


def _plot_distributions(outcome: Outcome, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, samples in outcome.samples.items():
        if not samples:
            continue
        ms = sorted(s * 1000 for s in samples)
        fractions = [(i + 1) / len(ms) for i in range(len(ms))]
        ax.step(ms, fractions, where="post", label=f"{label} (n={len(ms)})")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    # Label the 2s and 5s between the decades; more labels would overlap.
    ax.xaxis.set_minor_formatter(
        FuncFormatter(lambda value, _: f"{value:g}" if f"{value:g}"[0] in "25" else "")
    )
    ax.tick_params(axis="x", which="minor", labelsize="x-small")
    ax.set_xlabel("milliseconds (log scale)")
    ax.set_ylabel("fraction of samples ≤ x")
    ax.set_title(outcome.title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2, fontsize="small")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def _plot_bars(outcome: Outcome, chart: str, values: dict[str, float], out: Path) -> Path:
    path = out / f"{outcome.name}-{_slug(chart)}.png"
    fig, ax = plt.subplots(figsize=(7, 4))
    labels = list(values)
    bars = ax.bar(range(len(labels)), [values[k] for k in labels], color="#4477aa")
    # Wrapped: six labels such as "opsboard, 2 workers, PostgreSQL" overlapped on one line.
    ax.set_xticks(range(len(labels)), [textwrap.fill(k, 16) for k in labels], fontsize="small")
    ax.bar_label(bars, fmt="%.3g")
    ax.set_title(f"{outcome.title}: {chart}")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")
