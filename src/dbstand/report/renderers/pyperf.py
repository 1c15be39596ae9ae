"""pyperf's JSON (format version 1.0): one benchmark per measured case, so
`python -m pyperf compare_to a.json b.json` and `pyperf stats` read dbstand runs.

Each case becomes one pyperf run whose values are the counted iterations' times in
seconds per operation (pyperf's "value per loop"); `loops` is the operations an
iteration ran, so pyperf's raw values are the iteration times themselves. Failed
cases have no values and are left out (pyperf has no notion of a failed benchmark):
`compare_to` then lists them as missing, and dbstand's own report names them.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from dbstand.report.model import Measurement, Report

FORMAT_VERSION = "1.0"


def _text(value: Any) -> str | None:
    """pyperf metadata strings: one line, not empty."""
    text = re.sub(r"\s+", " ", str(value or "")).strip()
    return text or None


def _date(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def _suite_metadata(report: Report) -> dict[str, Any]:
    """What pyperf calls the common metadata: the machine and interpreter."""
    env = report.environment
    python = str(env.get("python") or "")
    out: dict[str, Any] = {
        "cpu_model_name": _text(env.get("cpu_model")),
        "cpu_count": env.get("cpu_logical") if isinstance(env.get("cpu_logical"), int)
        else None,
        "platform": _text(env.get("os")),
        "python_implementation": _text(python.split(" ")[0].lower()) if python else None,
        "python_version": _text(python.split(" ", 1)[-1]) if python else None,
        "python_executable": _text(env.get("executable")),
        "dbstand_version": _text(env.get("dbstand")),
        "dbstand_run_id": _text(report.header.get("run_id")),
        "dbstand_status": _text(report.status),
        "description": _text(report.title),
    }
    return {k: v for k, v in out.items() if v is not None}


def _benchmark(m: Measurement) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": m.name, "unit": "second", "loops": m.ops_per_sample,
        "dbstand_operation": _text(m.operation),
        "dbstand_figure": f"{m.value:.6g} {m.unit}" if m.value else None,
        "dbstand_unstable": "yes" if m.unstable else None,
        "date": _date(m.started_at),
        "duration": round(m.duration_s, 6) if m.duration_s else None,
    }
    run = {"metadata": {k: v for k, v in metadata.items() if v is not None},
           "values": list(m.samples)}
    return {"runs": [run]}


def render(report: Report) -> str:
    benchmarks = [_benchmark(m) for m in report.measurements if m.samples and not m.failed]
    payload = {"version": FORMAT_VERSION, "metadata": _suite_metadata(report),
               "benchmarks": benchmarks}
    return json.dumps(payload, indent=1) + "\n"
