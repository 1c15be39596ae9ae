"""The report model: what a run shows, independent of the format that shows it.

A workload turns its results records into a `Report` (workloads/<name>/report.py):
sections of tables, charts and notes, plus the long-form data rows that CSV and JSON
exports carry. Renderers (report/renderers/) draw a Report and know no workload by
name, so adding a format is one renderer and adding a workload is one builder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Column:
    key: str
    title: str                 # names its unit and direction: "ops/s ↑", "p50 µs ↓"
    numeric: bool = False
    compact: bool = True       # shown in the terminal (every format keeps all otherwise)


@dataclass
class Table:
    title: str
    columns: list[Column]
    rows: list[dict[str, str]]                       # formatted cells by column key
    styles: list[str | None] = field(default_factory=list)   # failed|unstable|limit|None
    caption: str = ""
    anchor: str = ""

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


Block = Table | BarChart | DotChart | str     # a str is a paragraph


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

    def tables(self) -> list[Table]:
        return [b for s in self.sections for b in s.blocks if isinstance(b, Table)]


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
