"""The report model: what a run shows, independent of the format that shows it.

A workload turns its results records into a `Report` (workloads/<name>/report.py):
sections of tables, charts and notes, plus the long-form data rows that CSV and JSON
exports carry. Renderers (report/renderers/) draw a Report and know no workload by
name, so adding a format is one renderer and adding a workload is one builder.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Column:
    key: str
    title: str                 # names its unit and direction: "ops/s ↑", "p50 µs ↓"
    numeric: bool = False
    compact: bool = True       # shown in the terminal (every format keeps all otherwise)
    #: names the row (stack, operation, users...): repeated in every part of a table the
    #: terminal folds to fit its width; unmarked tables use their leading text columns
    names_row: bool = False
    #: sentences (a verdict's reason, a claim's text): in the terminal they wrap between
    #: words and take the width the other columns leave, instead of one long line
    prose: bool = False


@dataclass
class Table:
    title: str
    columns: list[Column]
    rows: list[dict[str, str]]                       # formatted cells by column key
    styles: list[str | None] = field(default_factory=list)   # failed|unstable|limit|None
    caption: str = ""
    anchor: str = ""
    #: per row, the id a link to that row uses (`case_anchor`), when rows are cases
    row_anchors: list[str] = field(default_factory=list)
    #: per row, files a cell links to, by column key (HTML draws links, others the label)
    links: list[dict[str, list[Link]]] = field(default_factory=list)

    def style(self, index: int) -> str | None:
        return self.styles[index] if index < len(self.styles) else None


@dataclass(frozen=True)
class Bar:
    series: str
    value: float
    low: float | None = None       # the 95% interval, when known
    high: float | None = None
    flag: str = ""                 # "UNSTABLE", "FAILED"...


@dataclass
class BarChart:
    """Grouped horizontal bars: one group per category, one bar per series."""

    title: str
    unit: str                      # "ops/s (higher is better)"
    groups: list[tuple[str, list[Bar]]]
    anchor: str = ""
    table_anchor: str = ""         # the table holding the same figures
    note: str = ""


@dataclass
class DotChart:
    """Points per row on a log axis: latency percentiles span orders of magnitude."""

    title: str
    unit: str
    keys: list[str]                                   # p50, p99, ...
    rows: list[tuple[str, dict[str, float]]]          # label -> key -> value
    anchor: str = ""
    table_anchor: str = ""
    note: str = ""


@dataclass(frozen=True)
class StackedBar:
    """One case's tiers side by side: each part a (tier, share of the machine 0..1)."""

    label: str
    parts: list[tuple[str, float]]
    anchor: str = ""               # the case's table row


@dataclass
class StackedBarChart:
    """One stacked bar per case on a 0..100% axis of the machine's CPU capacity."""

    title: str
    tiers: list[str]               # the stacking order and the legend
    bars: list[StackedBar]
    anchor: str = ""
    note: str = ""


@dataclass(frozen=True)
class Link:
    """A file beside the results (a flame graph) that a report links to."""

    label: str
    href: str                      # relative to the results file's folder


Block = Table | BarChart | DotChart | StackedBarChart | str     # a str is a paragraph

#: params that name where a case ran, not what it measured (a throwaway table prefix)
IGNORED_PARAMS = ("prefix", "keep")


@dataclass
class Measurement:
    """One case's headline figure in a shape any tool can take: benchmark exports
    (pyperf, HdrHistogram logs, github-action-benchmark) and `dbstand compare` read
    these, so they need no knowledge of the workload that made them."""

    key: str                  # what was measured, not where: matches across runs
    name: str                 # unique within a report, for humans and other tools
    unit: str                 # of `value`: "ops/s", "rows/s", "requests/s"...
    bigger_is_better: bool
    value: float | None       # the headline figure; None when the case failed
    low: float | None = None  # its 95% confidence interval, when known
    high: float | None = None
    #: seconds per operation, one per counted iteration (or repeated run)
    samples: list[float] = field(default_factory=list)
    operation: str = "operation"          # what one sample times: batch, pass, request
    ops_per_sample: int = 1               # operations an iteration ran (its revs)
    hdr: str | None = None                # HdrHistogram V2 compressed base64, in ns
    latency_us: dict[str, float] = field(default_factory=dict)   # p50, p90, p99, ...
    failed: bool = False
    unstable: bool = False
    error: str = ""
    started_at: float | None = None       # Unix seconds, when the case's timing began
    duration_s: float | None = None
    #: the record's per-interval `series` (docs/results-schema.md), when recorded
    series: dict[str, Any] | None = None
    anchor: str = ""                      # the id of the case's table row (case_anchor)

    @property
    def ci95_pct(self) -> float | None:
        if self.value and self.low is not None and self.high is not None:
            return (self.high - self.low) / 2 / self.value * 100
        return None


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Report:
    title: str
    sections: list[Section]
    notes: list[str] = field(default_factory=list)       # footnotes, failures, flags
    caption: str = ""                                     # units and directions, once
    status: str = "complete"
    complete: bool = True
    header: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    #: the long form every export carries: one dict per row, with these columns
    data: list[dict[str, Any]] = field(default_factory=list)
    data_columns: list[str] = field(default_factory=list)
    #: workload-specific JSON beside `data` (fits, rankings...)
    extra: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: one per case, for benchmark tools and `dbstand compare`
    measurements: list[Measurement] = field(default_factory=list)

    def tables(self) -> list[Table]:
        return [b for s in self.sections for b in s.blocks if isinstance(b, Table)]


def case_key(record: dict[str, Any]) -> str:
    """A case's identity across runs: workload, stack, target kind, mode, op, params.

    Not the target URL, whose port changes with every throwaway server."""
    params = {k: v for k, v in (record.get("params") or {}).items() if k not in IGNORED_PARAMS}
    return json.dumps([record.get("workload"), record.get("stack"), record.get("target_kind"),
                       record.get("mode"), record.get("op"), params], sort_keys=True,
                      default=str)


def case_anchor(record: dict[str, Any]) -> str:
    """The id of a case's table row, so charts can link to it: `case-<case_index>`."""
    index = record.get("case_index")
    return f"case-{index}" if isinstance(index, int) else ""


def _epoch(text: Any) -> float | None:
    from datetime import datetime

    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def measurement(record: dict[str, Any], name: str, unit: str, value: float | None, *,
                bigger_is_better: bool = True, operation: str = "operation",
                samples: list[float] | None = None) -> Measurement:
    """A Measurement from a case record: the builder names the figure, the rest (samples
    from `iteration_s.all` / `revs`, interval from `ci95_pct`, HDR, status) is common.

    A case measured once (one `dbstand http` load) has one sample, its mean time per
    operation, so every tool still gets a value to read."""
    ok = record.get("status") == "ok" and value is not None
    revs = int(record.get("revs") or 1)
    if samples is None:
        times = list((record.get("iteration_s") or {}).get("all") or [])
        n = record.get("iterations") or len(times)
        samples = [t / revs for t in (times[-n:] if n else times) if t and t > 0]
        ops = record.get("ops_per_s")
        if not samples and ok and ops:
            samples = [1.0 / float(ops)]
    half = (value or 0) * float(record.get("ci95_pct") or 0) / 100
    has_ci = ok and record.get("ci95_pct") is not None
    duration = record.get("duration_s")
    end = _epoch(record.get("finished_at")) if record.get("finished_at") else None
    return Measurement(
        key=case_key(record), name=name, unit=unit, bigger_is_better=bigger_is_better,
        value=value if ok else None, low=value - half if has_ci and value else None,
        high=value + half if has_ci and value else None, samples=samples if ok else [],
        operation=operation, ops_per_sample=max(1, revs), hdr=record.get("latency_hdr") or None,
        latency_us={k: float(v) for k, v in (record.get("latency_us") or {}).items()
                    if isinstance(v, int | float)},
        failed=not ok, unstable=bool(record.get("unstable")), error=str(record.get("error") or ""),
        started_at=end - float(duration) if end is not None and duration else end,
        duration_s=float(duration) if duration else None,
        series=record["series"] if isinstance(record.get("series"), dict) else None,
        anchor=case_anchor(record))


def load_measurements(records: list[dict[str, Any]],
                      name: Callable[[dict[str, Any]], str]) -> list[Measurement]:
    """Per case of a served load repeated in runs (webtech, docquery: `ops_per_s_runs`):
    requests/s, each run one sample (1 / its rate); `name(record)` names the figure."""
    return [measurement(r, name(r), "requests/s", r.get("ops_per_s"), operation="request",
                        samples=[1.0 / x for x in r.get("ops_per_s_runs") or [] if x])
            for r in records]


def unique_names(measurements: list[Measurement]) -> None:
    """Make names unique in place (exports key benchmarks by name): a repeat gets #2..."""
    seen: dict[str, int] = {}
    for m in measurements:
        count = seen.get(m.name, 0) + 1
        seen[m.name] = count
        if count > 1:
            m.name = f"{m.name} #{count}"


def fmt(value: Any, digits: int = 1) -> str:
    """A number as the tables print it ("-" for missing)."""
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


@dataclass(frozen=True)
class SeriesPoint:
    """One interval of a case's time series, as charts need it (no histogram)."""

    t_s: float
    dur_s: float
    warmup: bool
    ops: float
    ops_per_s: float
    errors: int = 0
    busy_s: float | None = None          # in-process cases: time inside iterations
    p50_us: float | None = None
    p99_us: float | None = None

    @property
    def busy_ops_per_s(self) -> float | None:
        """The rate while operations ran (pauses between iterations left out)."""
        return self.ops / self.busy_s if self.busy_s else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def series_runs(series: dict[str, Any] | None) -> list[list[SeriesPoint]]:
    """The runs of a `series` field as points; malformed intervals are skipped, so a
    report of a file from another writer still renders."""
    runs = (series or {}).get("runs")
    out: list[list[SeriesPoint]] = []
    for run in runs if isinstance(runs, list) else []:
        points = []
        for p in run if isinstance(run, list) else []:
            if not isinstance(p, dict):
                continue
            t, dur, ops = _number(p.get("t_s")), _number(p.get("dur_s")), _number(p.get("ops"))
            if t is None or not dur or dur <= 0 or ops is None:
                continue
            rate = _number(p.get("ops_per_s"))
            found = p.get("latency_us")
            lat: dict[str, Any] = found if isinstance(found, dict) else {}
            points.append(SeriesPoint(
                t, dur, p.get("phase") == "warmup", ops, ops / dur if rate is None else rate,
                int(_number(p.get("errors")) or 0), _number(p.get("busy_s")),
                _number(lat.get("p50")), _number(lat.get("p99"))))
        out.append(points)
    return out
