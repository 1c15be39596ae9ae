"""`dbstand study NAME`: run a seed's study here and check its claims."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from dbstand.console import console
from dbstand.errors import UserError
from dbstand.modes.pinning import DEFAULT_PLACEMENT
from dbstand.studies import STUDIES
from dbstand.workloads.run_common import Html, output_option


def study(
    name: Annotated[str, typer.Argument(help="Study: " + ", ".join(STUDIES))],
    quick: Annotated[bool, typer.Option(
        "--quick", help="Small sizes for laptops and CI (a few minutes on 2 cores)")] = False,
    markdown: Annotated[Path | None, typer.Option(
        help="Also write the study as a Markdown page here (e.g. docs/studies/NAME.md)")]
        = None,
    html: Html = None,
    output: Annotated[Path | None, output_option("study-NAME")] = None,
    results: Annotated[Path | None, typer.Option(
        "--results", help="Check the claims on an earlier run of this study instead of "
                          "running it again")] = None,
    pin: Annotated[bool, typer.Option(
        help="Place kv cases by the placement table (client and server CPUs)")] = True,
    pin_cpus: Annotated[str, typer.Option(
        help="kv: the placement table's candidate: same (the table: one CPU), separate "
             "or db-with-client")]
        = DEFAULT_PLACEMENT,
) -> None:
    """Run a seed's study (its matrix, settings and sizes) on servers started for it,
    print the seed's figures beside the measured ones and check each of its claims."""
    from dbstand.report.renderers import renderer
    from dbstand.report.renderers.terminal import print_report
    from dbstand.results.store import read_results
    from dbstand.studies import get_study
    from dbstand.studies.base import StudyOptions
    from dbstand.studies.page import markdown_page

    chosen = get_study(name)
    options = StudyOptions(quick=quick, pin=pin, pin_cpus=pin_cpus, output=output)
    started = time.monotonic()
    run = read_results(results) if results is not None else chosen.run(options)
    if results is not None and run.workload != chosen.workload:
        raise UserError(f"--results {results} is a {run.workload or 'unknown'} run, not a "
                        f"{chosen.workload} run of the {name} study: its claims cannot be "
                        "checked on it")
    elapsed = time.monotonic() - started
    report, _claims = chosen.report(run, quick)
    print_report(report, console)
    console.print(f"results: [bold]{run.path}[/]")
    if results is None:
        console.print(f"study ran in {elapsed:,.0f} s")
    if markdown is not None:
        _write(markdown, markdown_page(chosen, report, run, quick, name,
                                       None if results else elapsed))
        console.print(f"markdown: [bold]{markdown}[/]")
    if html is not None:
        _write(html, renderer("html")(report))
        console.print(f"report: [bold]{html}[/]")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
