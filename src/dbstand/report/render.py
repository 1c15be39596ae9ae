"""Output formats of the results table: terminal (rich), Markdown, CSV, JSON."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from dbstand.report.table import (
    COLUMNS,
    PROBE_KEYS,
    TERMINAL_CAPTION,
    TERMINAL_COLUMNS,
    formatted,
    sweep_lines,
    table_rows,
)
from dbstand.results.store import ResultsFile
from dbstand.workloads.batch import report as batch_report
from dbstand.workloads.parking import report as parking_report

FORMATS = ("table", "markdown", "csv", "json", "html")


def _title(results: ResultsFile) -> str:
    header = results.header or {}
    return (f"dbstand {header.get('workload', '')} run {header.get('run_id', '?')} "
            f"({results.status})")


def render_terminal(results: ResultsFile, console: Console) -> None:
    if batch_report.is_batch(results):  # batch has its own tables (report/batch.py)
        batch_report.render_terminal(results, console)
        return
    if parking_report.is_parking(results):
        parking_report.render_terminal(results, console)
        return
    rows = table_rows(results.cases)
    targets = {str(c.get("target")) for c in results.cases}
    columns = [c for c in TERMINAL_COLUMNS if c.key not in _constant_columns(results, rows)]
    title = _title(results)
    if "target" not in {c.key for c in columns} and targets:
        title += f"\non {next(iter(targets))}"
    table = Table(title=title, header_style="bold", caption=TERMINAL_CAPTION,
                  box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for col in columns:
        table.add_column(col.title, justify="right" if col.numeric else "left",
                         overflow="fold", no_wrap=col.numeric,
                         min_width=len(col.title) if col.key != "note" else None)
    for row in rows:
        style = "red" if row["failed"] else ("yellow" if row["unstable"] else
                                             ("cyan" if row.get("limit") else None))
        # escape: `tarantool[sql]` is a stack label, not rich markup
        table.add_row(*(escape(formatted(row, c.key)) for c in columns), style=style)
    console.print(table)
    for line in footnote_lines(results, rows):
        console.print(escape(line), highlight=False)
    for warning in results.warnings:
        console.print(f"[yellow]warning:[/] {warning}")
    if not results.complete:
        console.print(f"[yellow]note:[/] this run is {results.status}")
    unstable = sum(1 for r in rows if r["unstable"])
    if unstable:
        console.print(f"[yellow]{unstable} case(s) UNSTABLE[/]: their 95% confidence "
                      "interval stayed wider than the target; rerun on a quieter machine "
                      "or raise --max-iterations.")


def footnote_lines(results: ResultsFile, rows: list[dict[str, Any]]) -> list[str]:
    """What does not fit in a cell: failures, and the native form of each op."""
    lines = []
    for row in rows:
        if row["failed"]:
            lines.append(f"FAILED {row['stack']} {row['op']}: {row['error']}")
    forms: dict[tuple[str, str, str], list[str]] = {}
    for row in rows:
        if row.get("op_form"):
            key = (row["target"].split(":", 1)[0], row["op"], row["op_form"])
            if row["stack"] not in forms.setdefault(key, []):
                forms[key].append(row["stack"])
    several = len({stack for stacks in forms.values() for stack in stacks}) > 1
    for (kind, op, form), stacks in forms.items():
        who = f" ({', '.join(stacks)})" if several else ""
        lines.append(f"{op} on {kind}: {form}{who}")
    if any(row.get("limit") for row in rows):
        lines.append("LIMIT: a native client (pgbench) on the same table and statements: "
                     "how far the Python stacks are from what the server and network give")
    return lines + sweep_lines(results.cases)


def _constant_columns(results: ResultsFile, rows: list[dict[str, Any]]) -> set[str]:
    """Columns the terminal can drop: one target (shown in the title), one mode, and
    `vs best` when no operation was measured more than once."""
    drop = set()
    if len({str(c.get("target")) for c in results.cases}) == 1:
        drop.add("target")
    if len({c.get("mode") for c in results.cases}) == 1:
        drop.add("mode")
    ops = [(c.get("workload"), c.get("op")) for c in results.cases]
    if len(ops) == len(set(ops)):
        drop.add("relative")
    if not any(r["note"] for r in rows):
        drop.add("note")
    drop.update(key for key in PROBE_KEYS if all(r.get(key) is None for r in rows))
    return drop


def render_markdown(results: ResultsFile) -> str:
    if batch_report.is_batch(results):
        return batch_report.render_markdown(results)
    if parking_report.is_parking(results):
        return parking_report.render_markdown(results)
    rows = table_rows(results.cases)
    out = [f"### {_title(results)}", "",
           "| " + " | ".join(c.title for c in COLUMNS) + " |",
           "|" + "|".join("---:" if c.numeric else "---" for c in COLUMNS) + "|"]
    for row in rows:
        cells = [formatted(row, c.key).replace("|", "\\|") for c in COLUMNS]
        out.append("| " + " | ".join(cells) + " |")
    if not results.complete:
        out += ["", f"Run status: {results.status}."]
    return "\n".join(out) + "\n"


def render_csv(results: ResultsFile) -> str:
    if batch_report.is_batch(results):
        return batch_report.render_csv(results)
    if parking_report.is_parking(results):
        return parking_report.render_csv(results)
    rows = table_rows(results.cases)
    buf = io.StringIO()
    keys = [c.key for c in COLUMNS] + ["unstable", "failed"]
    writer = csv.DictWriter(buf, fieldnames=keys, extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow(row)
    return buf.getvalue()


def render_json(results: ResultsFile) -> str:
    if batch_report.is_batch(results):
        return batch_report.render_json(results)
    if parking_report.is_parking(results):
        return parking_report.render_json(results)
    payload: dict[str, Any] = {
        "run": results.header, "status": results.status, "complete": results.complete,
        "rows": table_rows(results.cases),
        "columns": {c.key: c.title for c in COLUMNS},
    }
    return json.dumps(payload, indent=2, default=str) + "\n"
