"""`dbstand compare BEFORE AFTER`: what changed between two runs, and is it real."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from dbstand.cli.common import console
from dbstand.errors import UserError
from dbstand.report.compare import compare
from dbstand.results.store import read_results


def compare_runs(
    before: Annotated[Path, typer.Argument(help="The baseline results file")],
    after: Annotated[Path, typer.Argument(help="The results file to judge")],
    threshold: Annotated[float, typer.Option(
        help="Smallest change, in %, reported as faster/slower")] = 5.0,
    format: Annotated[str, typer.Option("--format", "-f", help="table or json")] = "table",
    fail_on_regression: Annotated[bool, typer.Option(
        help="Exit 1 if any case is significantly slower (for CI)")] = False,
) -> None:
    """Compare two results files case by case: throughput ratio and Welch's t-test."""
    if format not in ("table", "json"):
        raise UserError(f"unknown format {format!r} (known: table, json)")
    if threshold < 0:
        raise UserError("--threshold cannot be negative")
    rows, only_before, only_after = compare(read_results(before), read_results(after),
                                            threshold)
    if format == "json":
        typer.echo(json.dumps({"comparisons": [r.__dict__ for r in rows],
                               "only_before": only_before, "only_after": only_after},
                              indent=2, default=str))
    else:
        table = Table(title=f"{after} vs {before}", box=box.SIMPLE_HEAD,
                      caption="ratio = after / before ops/s (>1: faster). Significance: "
                              "Welch's t-test on iteration times, 5% level.")
        for col, right in (("case", False), ("before ops/s", True), ("after ops/s", True),
                           ("ratio", True), ("t", True), ("verdict", False)):
            table.add_column(col, justify="right" if right else "left")
        for r in rows:
            style = {"slower": "red", "faster": "green"}.get(r.verdict)
            verdict = r.verdict + (" (unstable)" if r.unstable else "")
            table.add_row(r.label, f"{r.before_ops:,.0f}", f"{r.after_ops:,.0f}",
                          f"{r.ratio:.3f}x", "-" if r.t_stat is None else f"{r.t_stat:+.1f}",
                          verdict, style=style)
        console.print(table)
        for label in only_before:
            console.print(f"only in {before}: {label}")
        for label in only_after:
            console.print(f"only in {after}: {label}")
        if not rows:
            console.print("no case appears in both files")
    if fail_on_regression and any(r.verdict == "slower" for r in rows):
        sys.exit(1)
