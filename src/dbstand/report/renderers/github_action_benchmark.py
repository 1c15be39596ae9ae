"""github-action-benchmark's custom JSON: a list of `{name, unit, value, range, extra}`
for its `customBiggerIsBetter` tool, which stores each push's figures and charts them.

One file serves one tool and so one direction. dbstand's headline figures are
throughputs (ops/s, rows/s, requests/s, passes/s), bigger is better; a figure where
smaller is better would be inverted by that tool's alarm, so it is left out here
(pyperf or the JSON export carry it). Failed cases have no value and are left out:
the action would read a missing benchmark as no data, so the run's own exit code
and `dbstand compare` are what fail a build on them.
"""

from __future__ import annotations

import json
from typing import Any

from dbstand.report.model import Measurement, Report

TOOL = "customBiggerIsBetter"


def _extra(m: Measurement) -> str:
    parts = []
    lat = m.latency_us
    if lat.get("p50") is not None and lat.get("p99") is not None:
        parts.append(f"latency p50 {lat['p50']:.4g} µs, p99 {lat['p99']:.4g} µs")
    if m.samples:
        parts.append(f"{len(m.samples)} samples of one {m.operation}")
    if m.unstable:
        parts.append("UNSTABLE: its 95% interval stayed wider than the target")
    return "; ".join(parts)


def entries(report: Report) -> list[dict[str, Any]]:
    out = []
    for m in report.measurements:
        if m.failed or m.value is None or not m.bigger_is_better:
            continue
        entry: dict[str, Any] = {"name": m.name, "unit": m.unit, "value": round(m.value, 6)}
        if m.low is not None and m.high is not None:
            # the half-width of the 95% interval, in the value's unit as the action shows it
            entry["range"] = f"± {(m.high - m.low) / 2:.6g}"
        extra = _extra(m)
        if extra:
            entry["extra"] = extra
        out.append(entry)
    return out


def render(report: Report) -> str:
    return json.dumps(entries(report), indent=2, ensure_ascii=False) + "\n"
