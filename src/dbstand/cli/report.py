"""`dbstand report FILE`: re-print a results file in any format."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from dbstand.cli.common import console
from dbstand.errors import UserError
from dbstand.report.html import render_html
from dbstand.report.render import (
    FORMATS,
    render_csv,
    render_json,
    render_markdown,
    render_terminal,
)
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
    if format == "table":
        render_terminal(results, console)
        return
    text = {"markdown": render_markdown, "csv": render_csv, "json": render_json,
            "html": render_html}[format](results)
    if output is None:
        typer.echo(text, nl=False)
        return
    tmp = output.with_name(f".{output.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, output)
    console.print(f"wrote {output}")
