"""HdrHistogram's interval log (format 1.3): tagged interval lines per case that
recorded a latency histogram, so HdrHistogram's own tools (HistogramLogReader in
Java, Python's `hdrh.log`, HistogramLogProcessor, HdrHistogram plotters) read every
case's full per-operation latency distribution, not only dbstand's percentiles.

Lines: `Tag=<case>,<start s>,<length s>,<max ms>,<histogram>`. Starts are in seconds
since the epoch (so BaseTime is 0), the max in milliseconds (the histograms hold
nanoseconds, the log's usual 10^6 ratio). A case with a time series (the record's
`series`) whose intervals carry histograms gets one line per such interval, at its
real start and length: measured intervals under the case's tag (together exactly the
case's histogram for in-process cases), warm-up ones under `<tag>.warmup`. A run's
start is its `series.started_at` when recorded, else runs are laid end to end from
the case's start. Any other case gets one line: its start, its wall time, its whole
histogram. A tag may hold neither commas nor white space, so those become `_`; a
comment line above each case gives its full name.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from dbstand.report.model import Measurement, Report

LOG_FORMAT_VERSION = "1.3"
MAX_VALUE_UNIT_RATIO = 1_000_000.0   # ns -> ms for the interval's max column


def tag(name: str) -> str:
    return re.sub(r"[\s,]+", "_", name.strip()) or "case"


def _max_ns(m: Measurement) -> float:
    """The histogram's own max when it decodes here, else the recorded max."""
    try:
        from hdrh.histogram import HdrHistogram

        return float(HdrHistogram.decode(m.hdr).get_max_value())
    except Exception:  # an encoding this hdrh cannot read: the log still carries it
        return float(m.latency_us.get("max", 0.0)) * 1000


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _series_starts(m: Measurement) -> list[float]:
    """The recorded run starts of a case's series (Unix seconds)."""
    found = [_number(x) for x in _list((m.series or {}).get("started_at"))]
    return [x for x in found if x is not None]


def interval_lines(m: Measurement, start: float) -> list[str]:
    """One line per interval of `m.series` that holds a histogram (none if no interval
    does): (start, length, max ms, histogram) under the case's or its warm-up tag."""
    series = m.series or {}
    runs: list[Any] = _list(series.get("runs"))
    starts: list[Any] = _list(series.get("started_at"))
    out: list[str] = []
    begin = m.started_at if m.started_at is not None else start
    for r, run in enumerate(runs):
        if not isinstance(run, list):
            continue
        known = _number(starts[r]) if r < len(starts) else None
        origin = known if known is not None else begin
        for p in run:
            if not isinstance(p, dict):
                continue
            t, dur = _number(p.get("t_s")), _number(p.get("dur_s"))
            if t is None or dur is None:
                continue
            begin = max(begin, origin + t + dur)
            hdr = p.get("latency_hdr")
            if not isinstance(hdr, str) or not hdr:
                continue
            lat = p.get("latency_us") if isinstance(p.get("latency_us"), dict) else {}
            top = _number((lat or {}).get("max"))
            max_ns = top * 1000 if top is not None else _decoded_max(hdr)
            name = tag(m.name) + (".warmup" if p.get("phase") == "warmup" else "")
            out.append(f"Tag={name},{origin + t:.3f},{dur:.3f},"
                       f"{max_ns / MAX_VALUE_UNIT_RATIO:.3f},{hdr}")
    return out


def _decoded_max(hdr: str) -> float:
    try:
        from hdrh.histogram import HdrHistogram

        return float(HdrHistogram.decode(hdr).get_max_value())
    except Exception:
        return 0.0


def render(report: Report) -> str:
    cases = [m for m in report.measurements if not m.failed and (m.hdr or m.series)]
    # the log's StartTime: no interval may begin before it (readers skip those)
    starts = [m.started_at for m in cases if m.started_at is not None]
    starts += [x for m in cases for x in _series_starts(m)]
    start = min(starts) if starts else 0.0
    when = datetime.fromtimestamp(start, UTC).isoformat(" ", "seconds")
    out = [f"#[{report.title}]",
           "#[Latency per operation in nanoseconds; tagged intervals per case (warm-up "
           "intervals tagged <case>.warmup)]",
           f"#[Histogram log format version {LOG_FORMAT_VERSION}]",
           f"#[StartTime: {start:.3f} (seconds since epoch), {when}]",
           "#[BaseTime: 0.000 (seconds since epoch)]"]
    body: list[str] = []
    for m in cases:
        lines = interval_lines(m, start)
        if not lines and not m.hdr:
            continue
        begin = m.started_at if m.started_at is not None else start
        what = f"{len(lines)} interval(s)" if lines else "the whole case"
        body.append(f"#[case {tag(m.name)}: {m.name}; {m.unit} {m.value or 0:.6g}; {what}]")
        body += lines or [f"Tag={tag(m.name)},{begin:.3f},{m.duration_s or 0.0:.3f},"
                          f"{_max_ns(m) / MAX_VALUE_UNIT_RATIO:.3f},{m.hdr}"]
    if not body:
        out.append("#[No case of this run recorded a latency histogram]")
    out.append('"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"')
    return "\n".join(out + body) + "\n"
