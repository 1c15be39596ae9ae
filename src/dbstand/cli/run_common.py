"""What every `dbstand run <workload>` command shares: output options, targets and
the end of a run (table, report, exit code)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dbstand.cli.common import console, split_list

if TYPE_CHECKING:
    from dbstand.results.store import ResultsFile
    from dbstand.targets.url import TargetURL

DEFAULT_TARGET = "sqlite://"

Output = Annotated[Path | None, typer.Option("--output", "-o",
                   help="Results file (JSON Lines); default results/<time>-<workload>.jsonl")]
Html = Annotated[Path | None, typer.Option("--html", help="Also write the HTML report here")]


def finish(results: ResultsFile, html: Path | None) -> None:
    """Print the table and where things are; exit 1 if a case failed (for CI)."""
    from dbstand.report.render import render_terminal, write_report

    render_terminal(results, console)
    console.print(f"results: [bold]{results.path}[/]")
    if html is not None:
        write_report(results, html, "html")
        console.print(f"report: [bold]{html}[/]")
    failed = sum(1 for c in results.cases if c.get("status") != "ok")
    if failed:
        console.print(f"[red]{failed} case(s) failed[/]")
        raise typer.Exit(1)


@contextlib.contextmanager
def run_targets(text: str | None) -> Iterator[list[TargetURL]]:
    """Targets of the matrix; none given means embedded in-memory SQLite.

    In memory, because the default suite must be stable on any laptop: a file database
    adds the disk's and the page cache's noise (pass sqlite:///file.db to measure it).
    """
    from dbstand.targets.url import parse_target_url

    yield [parse_target_url(t) for t in split_list(text or DEFAULT_TARGET, "--target")]
