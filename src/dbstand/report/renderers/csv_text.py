"""CSV: the report's long-form data, one row per measured cell, every column."""

from __future__ import annotations

import csv
import io

from dbstand.report.model import Report


def render(report: Report) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=report.data_columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(report.data)
    return buf.getvalue()
