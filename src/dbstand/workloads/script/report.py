"""The script workload's report: kv's table of cases (transactions/s, intervals,
latency, CPU and statements per transaction), then per case the statements' counts
and mean latencies (as pgbench -r) and the balance check."""

from __future__ import annotations

from typing import Any

from dbstand.report.model import Column, Report, Section, Table
from dbstand.workloads.kv.report import build as build_cases
from dbstand.workloads.kv.table import case_label

STATEMENT_COLUMNS = (
    Column("script", "script"), Column("line", "line", True),
    Column("count", "count", True), Column("per_tx", "per tx", True),
    Column("mean_ms", "mean ms ↓", True), Column("command", "command"),
)


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def statement_table(record: dict[str, Any]) -> Table | None:
    rows = record.get("statements") or []
    if not rows:
        return None
    cells = []
    for r in rows:
        per_tx = (r["count"] / r["script_transactions"]
                  if r.get("count") is not None and r.get("script_transactions") else None)
        cells.append({"script": r["script"], "line": str(r["line"]),
                      "count": _fmt(r.get("count")), "per_tx": _fmt(per_tx),
                      "mean_ms": _fmt(r.get("mean_ms")), "command": r["command"]})
    caption = ""
    check = record.get("balance_check")
    if check:
        caption = (f"balances consistent: every balance table sums to the history's "
                   f"{check['history_delta_sum']}")
    return Table(case_label(record), list(STATEMENT_COLUMNS), cells, caption=caption)


def build(records: list[dict[str, Any]], title: str) -> Report:
    report = build_cases(records, title)
    tables = [t for t in (statement_table(r) for r in records
                          if r.get("status") == "ok") if t is not None]
    if tables:
        report.sections.append(Section("Statements (whole case, warm-up included)",
                                       list(tables)))
    return report
