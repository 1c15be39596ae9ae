"""The listing and status commands' output: a table for people, or `--format json`
(one JSON array of objects, the same rows with typed values) for scripts."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from rich.table import Table

from dbstand.console import console

FORMATS = ("table", "json")


def _check(value: str) -> str:
    if value not in FORMATS:
        raise typer.BadParameter(f"takes {' or '.join(FORMATS)}, not {value!r}",
                                 param_hint="--format")
    return value


FormatOption = Annotated[str, typer.Option(
    "--format", callback=_check, metavar="table|json",
    help="table (default) or json: one JSON array of objects, one per row, for scripts "
         "(docs/cli-json.md)")]


def _cell(value: Any) -> str:
    """A value as the table shows it: yes/no coloured, lists joined, none as '-'."""
    if value is True:
        return "[green]yes[/]"
    if value is False:
        return "[red]no[/]"
    if value is None or value == "" or value == []:
        return "-"
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value))
    return str(value)


def show(title: str, rows: Sequence[dict[str, Any]], format: str,
         columns: Sequence[str] | None = None) -> None:
    """`rows` as a table titled `title` (columns: `columns`, else the first row's keys;
    a key's underscores shown as spaces), or as JSON on stdout."""
    if format == "json":
        sys.stdout.write(json.dumps(list(rows), indent=2, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        return
    keys = list(columns or (rows[0].keys() if rows else ()))
    table = Table(title=title)
    for key in keys:
        table.add_column(key.replace("_", " "), overflow="fold")
    for row in rows:
        table.add_row(*(_cell(row.get(k)) for k in keys))
    console.print(table)
