"""`dbstand report FILE`: re-print a results file in any format."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dbstand.cli.common import console
from dbstand.errors import UserError
from dbstand.report.render import FORMATS, render, render_terminal, write_report
from dbstand.results.store import read_results


def report(
    file: Annotated[Path, typer.Argument(help="A results file (JSON Lines)")],
    format: Annotated[str, typer.Option("--format", "-f",
                                        help="table, markdown, csv, json or html")] = "table",
    output: Annotated[Path | None, typer.Option("--output", "-o",
                                                help="Write here instead of stdout")] = None,
) -> None:
    """Print a results file's table (or write it as Markdown, CSV, JSON or HTML)."""
    if format not in FORMATS:
        raise UserError(f"unknown format {format!r} (known: {', '.join(FORMATS)})")
    results = read_results(file)
    if format == "table" and output is None:
        render_terminal(results, console)
        return
    if output is None:
        typer.echo(render(results, format), nl=False)
        return
    write_report(results, output, format)
    console.print(f"wrote {output}")
