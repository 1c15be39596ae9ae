"""JSON: the run header, status, long-form rows, the tables as shown, and what the
workload adds (fits, rankings)."""

from __future__ import annotations

import json
from typing import Any

from dbstand.report.model import Report


def render(report: Report) -> str:
    payload: dict[str, Any] = {
        "run": report.header, "status": report.status, "complete": report.complete,
        "rows": report.data, "columns": report.data_columns,
        "tables": [{"title": t.title, "columns": {c.key: c.title for c in t.columns},
                    "rows": t.rows} for t in report.tables()],
        "notes": report.notes,
        **report.extra,
    }
    return json.dumps(payload, indent=2, default=str) + "\n"
