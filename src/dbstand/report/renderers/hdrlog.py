"""HdrHistogram's interval log (format 1.3): one tagged interval line per case that
recorded a latency histogram, so HdrHistogram's own tools (HistogramLogReader in
Java, Python's `hdrh.log`, HistogramLogProcessor, HdrHistogram plotters) read every
case's full per-operation latency distribution, not only dbstand's percentiles.

Lines: `Tag=<case>,<start s>,<length s>,<max ms>,<histogram>`. The start is the
case's start in seconds since the epoch (so BaseTime is 0), the length its wall time,
the max in milliseconds (the histograms hold nanoseconds, the log's usual 10^6 ratio).
A tag may hold neither commas nor white space, so those become `_`; a comment line
above each interval gives the case's full name.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

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


def render(report: Report) -> str:
    cases = [m for m in report.measurements if m.hdr and not m.failed]
    starts = [m.started_at for m in cases if m.started_at is not None]
    start = min(starts) if starts else 0.0
    when = datetime.fromtimestamp(start, UTC).isoformat(" ", "seconds")
    out = [f"#[{report.title}]",
           "#[Latency per operation in nanoseconds; one tagged interval per case]",
           f"#[Histogram log format version {LOG_FORMAT_VERSION}]",
           f"#[StartTime: {start:.3f} (seconds since epoch), {when}]",
           "#[BaseTime: 0.000 (seconds since epoch)]"]
    if not cases:
        out.append("#[No case of this run recorded a latency histogram]")
    out.append('"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"')
    for m in cases:
        begin = m.started_at if m.started_at is not None else start
        out.append(f"#[case {tag(m.name)}: {m.name}; {m.unit} {m.value or 0:.6g}]")
        out.append(f"Tag={tag(m.name)},{begin:.3f},{m.duration_s or 0.0:.3f},"
                   f"{_max_ns(m) / MAX_VALUE_UNIT_RATIO:.3f},{m.hdr}")
    return "\n".join(out) + "\n"
