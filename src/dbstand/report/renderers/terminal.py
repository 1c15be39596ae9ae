"""The terminal: rich tables with the compact columns, then notes and flags."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from dbstand.report.model import Report, Table

STYLES = {"failed": "red", "unstable": "yellow", "limit": "cyan"}


def _table(table: Table) -> RichTable:
    columns = [c for c in table.columns if c.compact]
    out = RichTable(title=table.title, header_style="bold", caption=table.caption or None,
                    box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for col in columns:
        out.add_column(col.title, justify="right" if col.numeric else "left",
                       overflow="fold", no_wrap=col.numeric)
    for i, row in enumerate(table.rows):
        # escape: `tarantool[sql]` is a stack label, not rich markup
        out.add_row(*(escape(row.get(c.key, "")) for c in columns),
                    style=STYLES.get(table.style(i) or ""))
    return out


def print_report(report: Report, console: Console) -> None:
    for section in report.sections:
        for block in section.blocks:
            if isinstance(block, Table):
                console.print(_table(block))
            elif isinstance(block, str):
                console.print(escape(block), highlight=False)
    for line in report.notes:
        console.print(escape(line), highlight=False)
    if report.caption:
        console.print(escape(report.caption), style="dim", highlight=False)
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    if not report.complete:
        console.print(f"[yellow]note:[/] this run is {report.status}")


def render(report: Report) -> str:
    console = Console(width=160, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    print_report(report, console)
    return console.export_text()
