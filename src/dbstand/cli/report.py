"""`dbstand report FILE`: re-print a results file in any format, and export it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dbstand.console import console, err_console
from dbstand.errors import UserError
from dbstand.results.store import check_distinct_outputs, read_results
from dbstand.workloads.render import FORMATS, render, render_terminal, write_report
from dbstand.workloads.run_common import Export, named_outputs, write_exports


def report(
    file: Annotated[Path, typer.Argument(help="A results file (JSON Lines)")],
    format: Annotated[str, typer.Option("--format", "-f",
                                        help=", ".join(FORMATS))] = "table",
    output: Annotated[Path | None, typer.Option("--output", "-o",
                                                help="Write here instead of stdout")] = None,
    export: Export = None,
) -> None:
    """Print a results file's table (or write it in another format); --export writes
    more formats at once (pyperf, hdrlog, github-action-benchmark, summary...)."""
    if format not in FORMATS:
        raise UserError(f"unknown format {format!r} (known: {', '.join(FORMATS)})")
    outputs = [("--output", output)] if output is not None else []
    check_distinct_outputs([("the results file", file), *outputs,
                            *named_outputs(None, export)])
    results = read_results(file)
    if format == "table" and output is None:
        render_terminal(results, console)
    elif output is None:
        typer.echo(render(results, format), nl=False)
        write_exports(results, export, err_console)  # stdout holds the report
        return
    else:
        write_report(results, output, format)
        console.print(f"wrote {output}")
    write_exports(results, export)
